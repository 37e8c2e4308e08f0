from django.urls import path, register_converter

from a2aconsole.web.links import TaskIdConverter
from a2aconsole.web.views import (
    agent_cards,
    agent_tasks,
    agents,
    audit,
    auth,
    conversation,
    dashboard,
    inbox,
    status,
    targets,
    task_push,
    tasklist,
    tasks,
    watches,
)

register_converter(TaskIdConverter, "taskid")

urlpatterns = [
    # the console pages
    path("", dashboard.page, name="dashboard"),
    path("dashboard/agents/", dashboard.agents, name="dashboard-agents"),
    path("agents/", agent_cards.agent_list, name="agents"),
    path("agents/refresh/", agent_cards.agents_refresh, name="agents-refresh"),
    path("agents/add/", agents.agent_add, name="agent-add"),
    path("agents/file/", agents.agents_file, name="agents-file"),
    path("agent/<str:name>/", agent_cards.agent_detail, name="agent"),
    path("agent/<str:name>/refetch/", agent_cards.agent_refetch, name="agent-refetch"),
    path("agent/<str:name>/tasks/", agent_tasks.page, name="agent-tasks"),
    path("agent/<str:name>/edit/", agents.agent_edit, name="agent-edit"),
    path("agent/<str:name>/delete/", agents.agent_delete, name="agent-delete"),
    path("agent/<str:name>/origin/", agents.agent_origin, name="agent-origin"),
    path("chat/", conversation.home, name="conversation-home"),
    path("chat/<str:target>/", conversation.page, name="conversation"),
    path("chat/<str:target>/send/", conversation.send, name="conversation-send"),
    path("chat/<str:target>/older/", conversation.older, name="conversation-older"),
    path("chat/<str:target>/resend/", conversation.resend, name="conversation-resend"),
    path("chat/<str:target>/outgoing/<int:outgoing>/retry/", conversation.retry, name="outgoing-retry"),
    path("chat/<str:target>/outgoing/<int:outgoing>/discard/", conversation.discard, name="outgoing-discard"),
    path("files/<str:target>/<path:path>", conversation.download, name="download"),
    path("watches/", watches.page, name="watches"),
    path("watches/action/", watches.action, name="watch-action"),
    path("tasks/", tasklist.page, name="tasks"),
    # a task id is the agent's own: one segment, escaped (links.py)
    path("tasks/<str:agent>/<taskid:task_id>/act/", tasks.act, name="task-act"),
    path("tasks/<str:agent>/<taskid:task_id>/push/", task_push.page, name="task-push"),
    path("tasks/<str:agent>/<taskid:task_id>/", tasks.page, name="task"),
    path("inbox/", inbox.home, name="inbox-home"),
    path("unread/seen/", inbox.seen, name="inbox-seen"),
    path("unread/", inbox.counts, name="inbox-counts"),
    path("inbox/<str:target>/", inbox.page, name="inbox"),
    path("a2a", status.page, name="a2a-status"),
    path("audit/", audit.page, name="audit"),
    path("login/", auth.login_view, name="login"),
    path("logout/", auth.logout_view, name="logout"),
    path("password/", auth.password_change, name="password-change"),
    path("setup/<str:token>/", auth.setup, name="setup"),
    # chat targets and their API tokens
    path("targets/", targets.target_list, name="targets"),
    path("targets/add/", targets.target_add, name="target-add"),
    path("targets/<str:target_id>/", targets.target_edit, name="target"),
    path("targets/<str:target_id>/enabled/", targets.target_enabled, name="target-enabled"),
    path("targets/<str:target_id>/tokens/", targets.token_create, name="target-token-create"),
    path("targets/<str:target_id>/tokens/<int:token_id>/revoke/", targets.token_revoke, name="target-token-revoke"),
]
