//! The clauses checked on one recorded invocation: event lifecycles (EVT), run events (RUN),
//! transcript items (TRN), the response (RSP), message lifecycle (MSG) and approvals (APR).

use std::collections::{HashMap, HashSet};

use super::{Recording, Report};
use crate::driver::{
    Ack, Boundary, DecisionMode, Descriptor, DriverEvent, Phase, Role, SessionCodec, TranscriptItem,
    TranscriptKind, notice_kind,
};

#[derive(Default)]
struct Lifecycle {
    open: HashSet<String>,
    seen: HashSet<String>,
}

impl Lifecycle {
    /// Applies a phase; returns an error description on a rule break.
    fn apply(&mut self, id: &str, phase: Phase, empty_content: bool) -> Result<(), String> {
        if id.is_empty() {
            return Err("missing id".into());
        }
        match phase {
            Phase::Start => {
                if !self.seen.insert(id.to_owned()) {
                    return Err(format!("{id} opened twice"));
                }
                self.open.insert(id.to_owned());
            }
            Phase::Content => {
                if !self.open.contains(id) {
                    return Err(format!("content for {id} while it is not open"));
                }
                if empty_content {
                    return Err(format!("empty content chunk for {id}"));
                }
            }
            Phase::End => {
                if !self.open.remove(id) {
                    return Err(format!("{id} closed while not open"));
                }
            }
        }
        Ok(())
    }
}

fn check_item(item: &TranscriptItem) -> Option<(&'static str, String)> {
    match item.kind {
        TranscriptKind::Assistant | TranscriptKind::Thinking | TranscriptKind::User
            if item.text.is_empty() =>
        {
            Some(("TRN-01", format!("{:?} item without text", item.kind)))
        }
        TranscriptKind::ToolCall if item.tool_name.is_empty() => {
            Some(("TRN-02", "tool_call item without a tool name".into()))
        }
        TranscriptKind::ToolResult if item.tool_use_id.is_empty() => {
            Some(("TRN-03", "tool_result item without a tool use id".into()))
        }
        _ if item.delta && !matches!(item.kind, TranscriptKind::Assistant | TranscriptKind::Thinking) => {
            Some(("TRN-04", format!("delta flag on a {:?} item", item.kind)))
        }
        _ => None,
    }
}

/// Checks one recording.
pub(super) fn check(report: &mut Report, d: &Descriptor, codec: Option<&dyn SessionCodec>, rec: &Recording) {
    report.check("RUN-00", rec.response.is_some(), || {
        "the invocation did not return in time".into()
    });
    let mut text = Lifecycle::default();
    let mut thinking = Lifecycle::default();
    let mut tools = Lifecycle::default();
    let mut known_tools: HashSet<String> = HashSet::new();
    let mut transcript: Vec<&TranscriptItem> = Vec::new();
    for ev in &rec.events {
        match ev {
            DriverEvent::TextDelta(t) => {
                let r = text.apply(&t.message_id, t.phase, t.text.is_empty());
                report.check(
                    if t.phase == Phase::Content && t.text.is_empty() {
                        "EVT-04"
                    } else {
                        "EVT-03"
                    },
                    r.is_ok(),
                    || r.clone().unwrap_err(),
                );
                report.check("EVT-09", t.role == Role::Assistant, || {
                    "drivers must not emit user-role text".into()
                });
            }
            DriverEvent::Thinking(t) => {
                report.check("EVT-12", d.stream.reasoning, || {
                    "reasoning emitted but not declared".into()
                });
                let r = thinking.apply(&t.message_id, t.phase, t.text.is_empty());
                report.check("EVT-06", r.is_ok(), || r.clone().unwrap_err());
            }
            DriverEvent::ToolCall(t) => {
                if t.phase == Phase::Start {
                    report.check("EVT-05", !t.id.is_empty() && !t.name.is_empty(), || {
                        "tool start needs id and name".into()
                    });
                    known_tools.insert(t.id.clone());
                }
                if t.phase == Phase::Content {
                    report.check("EVT-12", d.stream.tool_call_args, || {
                        "tool argument deltas emitted but not declared".into()
                    });
                }
                let r = tools.apply(&t.id, t.phase, t.args_delta.is_empty());
                report.check("EVT-05", r.is_ok(), || r.clone().unwrap_err());
            }
            DriverEvent::ToolResult(r) => {
                report.check("EVT-05", known_tools.contains(&r.id), || {
                    format!("result for unknown tool call {}", r.id)
                });
            }
            DriverEvent::Notice(n) if n.kind == notice_kind::TRANSCRIPT_ITEM => {
                report.check("RUN-02", n.item.is_some(), || {
                    "transcript notice without an item".into()
                });
                if let Some(item) = &n.item {
                    transcript.push(item);
                    if let Some((clause, detail)) = check_item(item) {
                        report.check(clause, false, || detail);
                    }
                }
            }
            _ => {}
        }
    }
    let open: Vec<_> = text
        .open
        .iter()
        .chain(thinking.open.iter())
        .chain(tools.open.iter())
        .cloned()
        .collect();
    report.check("EVT-11", open.is_empty(), || {
        format!("lifecycles left open: {open:?}")
    });
    report.check("EVT-13", rec.late_events == 0, || {
        format!("{} events emitted after run returned", rec.late_events)
    });

    // Messages: claims only at declared boundaries, every claim settled exactly once.
    for (boundary, _) in &rec.claims {
        let declared = match boundary {
            Boundary::Interrupt => d.messages.interrupt,
            b => d.messages.boundaries.contains(b),
        };
        report.check("MSG-02", declared, || {
            format!("claimed at undeclared boundary {boundary}")
        });
    }
    report.check("MSG-01", rec.unsettled.is_empty(), || {
        format!("claims dropped without an ack: {:?}", rec.unsettled)
    });
    let mut settled: HashMap<&str, usize> = HashMap::new();
    for (id, ack) in &rec.settlements {
        if !matches!(ack, Ack::Requeue { .. }) {
            *settled.entry(id.as_str()).or_default() += 1;
        }
    }
    report.check("MSG-01", settled.values().all(|n| *n == 1), || {
        format!("messages settled more than once: {settled:?}")
    });

    // Approvals: only declared kinds, with a title and a source.
    for req in &rec.decisions {
        let kind = req.kind.unwrap_or(crate::driver::DecisionKind::Permission);
        report.check(
            "APR-01",
            d.stream.hitl && d.run_policy.modes(kind).contains(&DecisionMode::Ask),
            || format!("asked a {} decision without declaring it", kind.as_str()),
        );
        report.check("APR-02", !req.title.is_empty() && !req.source.is_empty(), || {
            "decision without title or source".into()
        });
    }

    let Some(resp) = &rec.response else { return };
    let mirrored: Vec<&TranscriptItem> = resp.transcript.iter().collect();
    report.check("RUN-04", mirrored == transcript, || {
        format!(
            "transcript notices ({}) do not mirror the response transcript ({})",
            transcript.len(),
            mirrored.len()
        )
    });
    for item in &resp.transcript {
        if let Some((clause, detail)) = check_item(item) {
            report.check(clause, false, || detail);
        }
    }
    if let Some(cp) = &resp.checkpoint
        && cp.valid
    {
        let clean = resp.failure.is_none() && resp.exit.is_none_or(|e| e.success());
        report.check("RSP-01", !cp.state.resume_id.is_empty() && clean, || {
            "a valid checkpoint needs a resume id and a clean outcome".into()
        });
        if let Some(codec) = codec {
            let rt = codec.decode(&codec.encode(&cp.state));
            report.check(
                "RSP-04",
                rt.as_ref() == Ok(&cp.state) && !codec.guard_fingerprint(&cp.state).is_empty(),
                || format!("checkpoint does not round-trip through the codec: {rt:?}"),
            );
        }
    }
    let stdout = String::from_utf8_lossy(&resp.raw.stdout);
    report.check(
        "RSP-03",
        resp.text.is_empty() || resp.raw.stdout.is_empty() || resp.text != stdout,
        || "the output text is a raw stdout dump".into(),
    );
    if let Some(t) = &resp.raw.terminal {
        report.check("RSP-05", !t.event.is_empty() && !t.json.is_null(), || {
            "terminal payload needs an event name and JSON".into()
        });
    }
}
