//! What the mock answers: a [`Script`] of [`Step`]s, each a fixed [`Reply`] or a closure over the
//! request log. The reply builder is in `reply.rs`; `sse.rs` turns a reply into wire events and
//! `server.rs` plays them.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use super::log::RecordedRequest;
use super::reply::Reply;

/// A closure that builds the reply to the current request. It sees the whole log, the current
/// request being the last entry, so a reply can depend on e.g. a `function_call_output`.
pub type ReplyFn = Arc<dyn Fn(&[RecordedRequest]) -> Reply + Send + Sync>;

/// One scripted answer to one `POST /v1/responses`.
#[derive(Clone)]
pub enum Step {
    /// Always this reply.
    Fixed(Reply),
    /// Computed from the request log.
    Dynamic(ReplyFn),
}

impl fmt::Debug for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Fixed(r) => f.debug_tuple("Fixed").field(r).finish(),
            Step::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

/// The queue of steps the mock plays in order; when it runs dry, the fallback answers.
#[derive(Debug, Clone)]
pub struct Script {
    steps: VecDeque<Step>,
    fallback: Step,
}

impl Default for Script {
    fn default() -> Self {
        Self::new()
    }
}

impl Script {
    /// An empty script whose fallback is [`Script::echo_reply`].
    pub fn new() -> Self {
        Self {
            steps: VecDeque::new(),
            fallback: Step::Dynamic(Arc::new(Script::echo_reply)),
        }
    }

    /// A script that answers every request with `ECHO n=<n>: <last user text>`.
    pub fn echo() -> Self {
        Self::new()
    }

    /// A script of fixed replies, in order.
    pub fn replies(replies: impl IntoIterator<Item = Reply>) -> Self {
        let mut s = Self::new();
        for r in replies {
            s = s.then(r);
        }
        s
    }

    /// Appends a fixed reply.
    pub fn then(mut self, reply: Reply) -> Self {
        self.steps.push_back(Step::Fixed(reply));
        self
    }

    /// Appends a reply computed from the request log.
    pub fn then_with(mut self, f: impl Fn(&[RecordedRequest]) -> Reply + Send + Sync + 'static) -> Self {
        self.steps.push_back(Step::Dynamic(Arc::new(f)));
        self
    }

    /// Replaces the fallback used once the queue is empty.
    pub fn otherwise(mut self, f: impl Fn(&[RecordedRequest]) -> Reply + Send + Sync + 'static) -> Self {
        self.fallback = Step::Dynamic(Arc::new(f));
        self
    }

    /// Takes the next step (or the fallback) and evaluates it against the log.
    pub(crate) fn next_reply(&mut self, log: &[RecordedRequest]) -> Reply {
        let step = self.steps.pop_front().unwrap_or_else(|| self.fallback.clone());
        match step {
            Step::Fixed(r) => r,
            Step::Dynamic(f) => f(log),
        }
    }

    /// The default fallback: one text message echoing the last user text of the current request.
    pub fn echo_reply(log: &[RecordedRequest]) -> Reply {
        let n = log.len();
        let last = log
            .last()
            .and_then(RecordedRequest::last_user_text)
            .unwrap_or_default();
        Reply::new().text(format!("ECHO n={n}: {last}"))
    }

    /// One text message `Tool said: <output>` quoting the last tool output of the current request
    /// (empty when there is none).
    pub fn tool_output_reply(log: &[RecordedRequest]) -> Reply {
        let out = log
            .last()
            .and_then(|r| r.tool_outputs().pop())
            .map(|(_, o)| o)
            .unwrap_or_default();
        Reply::new().text(format!("Tool said: {out}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::responses::reply::Element;

    #[test]
    fn script_plays_queue_then_fallback() {
        let mut s = Script::replies([Reply::new().text("one")])
            .otherwise(|log| Reply::new().text(format!("n={}", log.len())));
        let first = s.next_reply(&[]);
        assert!(matches!(&first.elements[0], Element::Text { deltas, .. } if deltas.concat() == "one"));
        let second = s.next_reply(&[]);
        assert!(matches!(&second.elements[0], Element::Text { deltas, .. } if deltas.concat() == "n=0"));
    }
}
