"""Contains all the data models used in inputs/outputs"""

from .acp_post_body import AcpPostBody
from .acp_post_default_body import AcpPostDefaultBody
from .acp_post_default_response_200 import AcpPostDefaultResponse200
from .acp_post_response_200 import AcpPostResponse200
from .agent_list import AgentList
from .agent_view import AgentView
from .agent_view_descriptor import AgentViewDescriptor
from .agui_run_body import AguiRunBody
from .agui_run_default_body import AguiRunDefaultBody
from .approval_list import ApprovalList
from .approval_view import ApprovalView
from .approval_view_details import ApprovalViewDetails
from .approvals_body import ApprovalsBody
from .approvals_body_on_reject import ApprovalsBodyOnReject
from .approvals_body_on_timeout import ApprovalsBodyOnTimeout
from .approvals_body_permission import ApprovalsBodyPermission
from .approvals_body_plan_review import ApprovalsBodyPlanReview
from .approvals_body_question import ApprovalsBodyQuestion
from .archived_thread import ArchivedThread
from .attempt_view import AttemptView
from .checkpoint_view import CheckpointView
from .choice_view import ChoiceView
from .create_thread_body import CreateThreadBody
from .create_thread_body_metadata import CreateThreadBodyMetadata
from .create_webhook_body import CreateWebhookBody
from .decision import Decision
from .decision_accepted import DecisionAccepted
from .decision_body import DecisionBody
from .delivery_list import DeliveryList
from .delivery_view import DeliveryView
from .error_body import ErrorBody
from .error_code import ErrorCode
from .error_detail import ErrorDetail
from .fork_body import ForkBody
from .health import Health
from .history_event import HistoryEvent
from .history_event_event import HistoryEventEvent
from .history_page import HistoryPage
from .inspect_view import InspectView
from .inspect_view_config_schema_type_0 import InspectViewConfigSchemaType0
from .inspect_view_environment_type_0 import InspectViewEnvironmentType0
from .inspect_view_models_type_0_item import InspectViewModelsType0Item
from .inspect_view_profile_type_0 import InspectViewProfileType0
from .inspect_view_quota_type_0 import InspectViewQuotaType0
from .inspect_view_skills_type_0 import InspectViewSkillsType0
from .mcp_headers import McpHeaders
from .message_accepted import MessageAccepted
from .message_body import MessageBody
from .message_timing import MessageTiming
from .probe_error import ProbeError
from .request_mcp_server import RequestMcpServer
from .request_mcp_transport_type_0 import RequestMcpTransportType0
from .request_mcp_transport_type_0_type import RequestMcpTransportType0Type
from .request_mcp_transport_type_1 import RequestMcpTransportType1
from .request_mcp_transport_type_1_type import RequestMcpTransportType1Type
from .resources_view import ResourcesView
from .run_links import RunLinks
from .run_list import RunList
from .run_summary import RunSummary
from .run_summary_usage_type_0 import RunSummaryUsageType0
from .run_view import RunView
from .run_view_error_type_0 import RunViewErrorType0
from .run_view_result_type_0 import RunViewResultType0
from .standby_view import StandbyView
from .start_run_body import StartRunBody
from .start_run_body_metadata import StartRunBodyMetadata
from .start_run_body_schema_type_0 import StartRunBodySchemaType0
from .start_run_body_workspace_type_0 import StartRunBodyWorkspaceType0
from .thread_defaults import ThreadDefaults
from .thread_defaults_metadata import ThreadDefaultsMetadata
from .thread_list import ThreadList
from .thread_summary import ThreadSummary
from .thread_view import ThreadView
from .usage_list import UsageList
from .usage_row_view import UsageRowView
from .usage_totals_view import UsageTotalsView
from .webhook_created import WebhookCreated
from .webhook_list import WebhookList
from .webhook_view import WebhookView

__all__ = (
    "AcpPostBody",
    "AcpPostDefaultBody",
    "AcpPostDefaultResponse200",
    "AcpPostResponse200",
    "AgentList",
    "AgentView",
    "AgentViewDescriptor",
    "AguiRunBody",
    "AguiRunDefaultBody",
    "ApprovalList",
    "ApprovalView",
    "ApprovalViewDetails",
    "ApprovalsBody",
    "ApprovalsBodyOnReject",
    "ApprovalsBodyOnTimeout",
    "ApprovalsBodyPermission",
    "ApprovalsBodyPlanReview",
    "ApprovalsBodyQuestion",
    "ArchivedThread",
    "AttemptView",
    "CheckpointView",
    "ChoiceView",
    "CreateThreadBody",
    "CreateThreadBodyMetadata",
    "CreateWebhookBody",
    "Decision",
    "DecisionAccepted",
    "DecisionBody",
    "DeliveryList",
    "DeliveryView",
    "ErrorBody",
    "ErrorCode",
    "ErrorDetail",
    "ForkBody",
    "Health",
    "HistoryEvent",
    "HistoryEventEvent",
    "HistoryPage",
    "InspectView",
    "InspectViewConfigSchemaType0",
    "InspectViewEnvironmentType0",
    "InspectViewModelsType0Item",
    "InspectViewProfileType0",
    "InspectViewQuotaType0",
    "InspectViewSkillsType0",
    "McpHeaders",
    "MessageAccepted",
    "MessageBody",
    "MessageTiming",
    "ProbeError",
    "RequestMcpServer",
    "RequestMcpTransportType0",
    "RequestMcpTransportType0Type",
    "RequestMcpTransportType1",
    "RequestMcpTransportType1Type",
    "ResourcesView",
    "RunLinks",
    "RunList",
    "RunSummary",
    "RunSummaryUsageType0",
    "RunView",
    "RunViewErrorType0",
    "RunViewResultType0",
    "StandbyView",
    "StartRunBody",
    "StartRunBodyMetadata",
    "StartRunBodySchemaType0",
    "StartRunBodyWorkspaceType0",
    "ThreadDefaults",
    "ThreadDefaultsMetadata",
    "ThreadList",
    "ThreadSummary",
    "ThreadView",
    "UsageList",
    "UsageRowView",
    "UsageTotalsView",
    "WebhookCreated",
    "WebhookList",
    "WebhookView",
)
