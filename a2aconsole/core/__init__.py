"""The A2A core: plain async Python over a2a-sdk. No Django or Channels imports (a test proves it)."""
