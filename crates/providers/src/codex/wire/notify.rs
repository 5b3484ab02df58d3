//! App-server notifications (server → client frames with a `method` and no `id`).
//!
//! Typed: the lifecycle (`thread/*`, `turn/*`), items and their deltas, `error` (with `willRetry`),
//! token usage, plan updates, `serverRequest/resolved` and config warnings. Every other method
//! (`account/rateLimits/updated`, `remoteControl/status/changed`, `thread/settings/updated`, …)
//! is [`ServerNotification::Unknown`] with its params.

use serde::Deserialize;
use serde_json::Value;

use super::items::{Thread, ThreadItem, ThreadTokenUsage, Turn, TurnError};
use super::{RequestId, from_str_tolerant};

/// A notification, by method.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerNotification {
    /// `error`: a model/stream error; `willRetry:true` is a retry notice, `false` precedes a failed
    /// `turn/completed`.
    Error(ErrorNotification),
    /// `thread/started`.
    ThreadStarted(ThreadStartedNotification),
    /// `thread/status/changed`.
    ThreadStatusChanged(ThreadStatusChangedNotification),
    /// `thread/tokenUsage/updated`.
    ThreadTokenUsageUpdated(TokenUsageNotification),
    /// `turn/started`.
    TurnStarted(TurnNotification),
    /// `turn/completed`: the terminal of a turn (`status` completed | interrupted | failed).
    TurnCompleted(TurnNotification),
    /// `turn/plan/updated`.
    TurnPlanUpdated(PlanUpdatedNotification),
    /// `turn/diff/updated`.
    TurnDiffUpdated(DiffUpdatedNotification),
    /// `item/started`.
    ItemStarted(ItemNotification),
    /// `item/completed`.
    ItemCompleted(ItemNotification),
    /// `item/agentMessage/delta`.
    AgentMessageDelta(DeltaNotification),
    /// `item/plan/delta`.
    PlanDelta(DeltaNotification),
    /// `item/reasoning/summaryTextDelta`.
    ReasoningSummaryTextDelta(ReasoningDeltaNotification),
    /// `item/reasoning/summaryPartAdded`.
    ReasoningSummaryPartAdded(ReasoningDeltaNotification),
    /// `item/reasoning/textDelta`.
    ReasoningTextDelta(ReasoningDeltaNotification),
    /// `item/commandExecution/outputDelta`.
    CommandExecutionOutputDelta(DeltaNotification),
    /// `item/fileChange/outputDelta`.
    FileChangeOutputDelta(DeltaNotification),
    /// `serverRequest/resolved`: a server request was answered (or withdrawn by an interrupt).
    ServerRequestResolved(ServerRequestResolvedNotification),
    /// `configWarning`.
    ConfigWarning(ConfigWarningNotification),
    /// `warning`.
    Warning(WarningNotification),
    /// `deprecationNotice` (e.g. `thread/fork` without `excludeTurns:true`).
    DeprecationNotice(ConfigWarningNotification),
    /// Any other method, with its params (`Value::Null` if absent).
    Unknown {
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
}

/// `error` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    /// The error.
    pub error: TurnError,
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// Whether Codex retries the request.
    #[serde(default)]
    pub will_retry: bool,
}

/// `thread/started` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ThreadStartedNotification {
    /// The thread.
    pub thread: Thread,
}

/// `thread/status/changed` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStatusChangedNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// `{"type":"idle"|"active"|"notLoaded"|"systemError", "activeFlags"?}`.
    pub status: Value,
}

/// `thread/tokenUsage/updated` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// Usage.
    pub token_usage: ThreadTokenUsage,
}

/// `turn/started` and `turn/completed` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// The turn.
    pub turn: Turn,
}

/// `turn/plan/updated` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanUpdatedNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// Explanation.
    #[serde(default)]
    pub explanation: Option<String>,
    /// Steps.
    #[serde(default)]
    pub plan: Vec<PlanStep>,
}

/// One plan step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlanStep {
    /// Step text.
    pub step: String,
    /// `pending` | `inProgress` | `completed`.
    pub status: String,
}

/// `turn/diff/updated` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffUpdatedNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// Unified diff of the turn so far.
    #[serde(default)]
    pub diff: String,
}

/// `item/started` and `item/completed` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemNotification {
    /// The item.
    pub item: ThreadItem,
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
}

/// Text delta params (agent message, plan, command output, file-change output).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeltaNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// The item the delta belongs to.
    pub item_id: String,
    /// The text piece.
    #[serde(default)]
    pub delta: String,
}

/// Reasoning delta params (`summaryIndex` or `contentIndex` set depending on the method).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningDeltaNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// Turn id.
    #[serde(default)]
    pub turn_id: String,
    /// The reasoning item.
    pub item_id: String,
    /// The text piece (absent for `summaryPartAdded`).
    #[serde(default)]
    pub delta: String,
    /// Summary part index.
    #[serde(default)]
    pub summary_index: Option<i64>,
    /// Raw content part index.
    #[serde(default)]
    pub content_index: Option<i64>,
}

/// `serverRequest/resolved` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    /// Thread id.
    #[serde(default)]
    pub thread_id: String,
    /// The server request's id.
    pub request_id: RequestId,
}

/// `configWarning` and `deprecationNotice` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ConfigWarningNotification {
    /// Summary.
    pub summary: String,
    /// Details.
    #[serde(default)]
    pub details: Option<String>,
}

/// `warning` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    /// Message.
    pub message: String,
    /// Thread id.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `item/*` params with the item parsed on the fast path ([`ThreadItem::from_json`]).
fn item_notification(params: Option<&str>) -> Result<ItemNotification, serde_json::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Raw<'a> {
        #[serde(borrow)]
        item: &'a serde_json::value::RawValue,
        #[serde(default)]
        thread_id: String,
        #[serde(default)]
        turn_id: String,
    }
    let text = params.unwrap_or("null");
    match serde_json::from_str::<Raw<'_>>(text) {
        Ok(raw) => Ok(ItemNotification {
            item: ThreadItem::from_json(raw.item.get())?,
            thread_id: raw.thread_id,
            turn_id: raw.turn_id,
        }),
        // Duplicate keys or a missing item: the tolerant derived path decides.
        Err(_) => from_str_tolerant(text),
    }
}

impl ServerNotification {
    /// Parses the params (raw JSON text, or `None` when absent) of `method`.
    pub fn parse(method: &str, params: Option<&str>) -> Result<Self, serde_json::Error> {
        fn p<T: serde::de::DeserializeOwned>(params: Option<&str>) -> Result<T, serde_json::Error> {
            from_str_tolerant(params.unwrap_or("null"))
        }
        Ok(match method {
            "error" => Self::Error(p(params)?),
            "thread/started" => Self::ThreadStarted(p(params)?),
            "thread/status/changed" => Self::ThreadStatusChanged(p(params)?),
            "thread/tokenUsage/updated" => Self::ThreadTokenUsageUpdated(p(params)?),
            "turn/started" => Self::TurnStarted(p(params)?),
            "turn/completed" => Self::TurnCompleted(p(params)?),
            "turn/plan/updated" => Self::TurnPlanUpdated(p(params)?),
            "turn/diff/updated" => Self::TurnDiffUpdated(p(params)?),
            "item/started" => Self::ItemStarted(item_notification(params)?),
            "item/completed" => Self::ItemCompleted(item_notification(params)?),
            "item/agentMessage/delta" => Self::AgentMessageDelta(p(params)?),
            "item/plan/delta" => Self::PlanDelta(p(params)?),
            "item/reasoning/summaryTextDelta" => Self::ReasoningSummaryTextDelta(p(params)?),
            "item/reasoning/summaryPartAdded" => Self::ReasoningSummaryPartAdded(p(params)?),
            "item/reasoning/textDelta" => Self::ReasoningTextDelta(p(params)?),
            "item/commandExecution/outputDelta" => Self::CommandExecutionOutputDelta(p(params)?),
            "item/fileChange/outputDelta" => Self::FileChangeOutputDelta(p(params)?),
            "serverRequest/resolved" => Self::ServerRequestResolved(p(params)?),
            "configWarning" => Self::ConfigWarning(p(params)?),
            "warning" => Self::Warning(p(params)?),
            "deprecationNotice" => Self::DeprecationNotice(p(params)?),
            other => Self::Unknown {
                method: other.to_owned(),
                params: match params {
                    Some(raw) => serde_json::from_str(raw)?,
                    None => Value::Null,
                },
            },
        })
    }

    /// The turn id the notification is scoped to, when it has one.
    pub fn turn_id(&self) -> Option<&str> {
        let id = match self {
            Self::Error(n) => &n.turn_id,
            Self::ThreadTokenUsageUpdated(n) => &n.turn_id,
            Self::TurnStarted(n) | Self::TurnCompleted(n) => &n.turn.id,
            Self::TurnPlanUpdated(n) => &n.turn_id,
            Self::TurnDiffUpdated(n) => &n.turn_id,
            Self::ItemStarted(n) | Self::ItemCompleted(n) => &n.turn_id,
            Self::AgentMessageDelta(n)
            | Self::PlanDelta(n)
            | Self::CommandExecutionOutputDelta(n)
            | Self::FileChangeOutputDelta(n) => &n.turn_id,
            Self::ReasoningSummaryTextDelta(n)
            | Self::ReasoningSummaryPartAdded(n)
            | Self::ReasoningTextDelta(n) => &n.turn_id,
            _ => return None,
        };
        (!id.is_empty()).then_some(id.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_typed_and_unknown_methods() {
        let n = ServerNotification::parse(
            "item/agentMessage/delta",
            Some(r#"{"threadId":"t","turnId":"u","itemId":"m","delta":"Hi"}"#),
        )
        .unwrap();
        assert!(matches!(&n, ServerNotification::AgentMessageDelta(d) if d.delta == "Hi"));
        assert_eq!(n.turn_id(), Some("u"));
        let n = ServerNotification::parse(
            "error",
            Some(r#"{"error":{"message":"boom","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}}},"threadId":"t","turnId":"u","willRetry":true}"#),
        )
        .unwrap();
        assert!(matches!(&n, ServerNotification::Error(e) if e.will_retry && e.error.message == "boom"));
        let n = ServerNotification::parse("account/rateLimits/updated", Some(r#"{"x":1}"#)).unwrap();
        assert!(
            matches!(n, ServerNotification::Unknown { ref method, ref params } if method == "account/rateLimits/updated" && params["x"] == 1)
        );
        let n = ServerNotification::parse("skills/changed", None).unwrap();
        assert!(matches!(
            n,
            ServerNotification::Unknown {
                params: Value::Null,
                ..
            }
        ));
        assert!(ServerNotification::parse("turn/completed", Some(r#"{"threadId":"t"}"#)).is_err());
    }
}
