"""a2aconsole: a web console and service for owners of remote A2A agents."""
