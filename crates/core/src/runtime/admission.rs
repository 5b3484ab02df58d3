//! Static checks before admission: policy, capabilities, MCP declarations and structured output.
//! A refusal here starts nothing and touches no resource.

use super::error::ConfigError;
use super::options::Resolved;
use crate::driver::{DecisionKind, Descriptor, FeatureLevel, SandboxLevel};
use crate::vocab::McpTransport;

/// Checks MCP declarations against the descriptor: each valid, its transport supported, names
/// unique. Also used for the MCP servers runtime services publish.
pub(crate) fn check_mcp(desc: &Descriptor, servers: &[crate::vocab::McpServer]) -> Result<(), ConfigError> {
    for server in servers {
        server.validate().map_err(ConfigError::InvalidMcpConfig)?;
        let mcp = &desc.mcp;
        if !(mcp.stdio || mcp.http || mcp.sse) {
            return Err(ConfigError::McpUnsupported(desc.driver_type.clone()));
        }
        let ok = match server.transport {
            McpTransport::Stdio { .. } => mcp.stdio,
            McpTransport::Http { .. } => mcp.http,
            McpTransport::Sse { .. } => mcp.sse,
        };
        if !ok {
            return Err(ConfigError::McpTransportUnsupported {
                driver: desc.driver_type.clone(),
                transport: server.transport.name().into(),
            });
        }
    }
    let mut names = std::collections::HashSet::new();
    for server in servers {
        if !names.insert(server.name.as_str()) {
            return Err(ConfigError::InvalidMcpConfig(format!(
                "duplicate MCP server name {:?}",
                server.name
            )));
        }
    }
    Ok(())
}

/// Checks the resolved settings against the descriptor.
pub(crate) fn check(desc: &Descriptor, r: &Resolved) -> Result<(), ConfigError> {
    r.policy.validate().map_err(ConfigError::InvalidPolicy)?;
    let caps = &desc.run_policy;
    let unsupported = |dimension: &str, value: String| ConfigError::PolicyCapabilityUnsupported {
        driver: desc.driver_type.clone(),
        dimension: dimension.into(),
        value,
    };
    if r.policy.sandbox != SandboxLevel::Inherit && !caps.sandbox {
        return Err(unsupported("sandbox", format!("{:?}", r.policy.sandbox)));
    }
    if r.policy.web_search != FeatureLevel::Inherit && !caps.web_search {
        return Err(unsupported("web_search", format!("{:?}", r.policy.web_search)));
    }
    if r.policy.browser != FeatureLevel::Inherit && !caps.browser {
        return Err(unsupported("browser", format!("{:?}", r.policy.browser)));
    }
    for kind in [
        DecisionKind::Permission,
        DecisionKind::PlanReview,
        DecisionKind::Question,
    ] {
        if let Some(mode) = r.policy.approvals.explicit_mode(kind)
            && !caps.modes(kind).contains(&mode)
        {
            return Err(ConfigError::HumanDecisionModeUnsupported {
                driver: desc.driver_type.clone(),
                kind,
                mode,
            });
        }
    }
    check_mcp(desc, &r.mcp)?;
    if !r.skills.is_empty() && !desc.skills.supported {
        return Err(ConfigError::SkillMaterializationFailed(format!(
            "the {} driver cannot materialize skills",
            desc.driver_type
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ApprovalMode, ApprovalPolicy, DecisionMode, McpCaps, Policy, RunPolicyCaps};
    use crate::runtime::options::{Shared, resolve};
    use crate::vocab::McpServer;

    fn desc() -> Descriptor {
        Descriptor {
            driver_type: "t".into(),
            run_policy: RunPolicyCaps {
                sandbox: true,
                permission: vec![DecisionMode::Ask, DecisionMode::AutoApprove],
                ..Default::default()
            },
            mcp: McpCaps {
                stdio: true,
                http: false,
                sse: false,
            },
            ..Default::default()
        }
    }

    fn resolved(policy: Policy, mcp: Vec<McpServer>) -> Resolved {
        let mut s = Shared {
            policy: Some(policy),
            ..Default::default()
        };
        s.mcp = Some(mcp);
        resolve(&Shared::default(), &s).unwrap()
    }

    #[test]
    fn explicit_values_are_checked_and_inherit_stays_portable() {
        assert!(check(&desc(), &resolved(Policy::default(), vec![])).is_ok());
        assert!(check(&desc(), &resolved(Policy::read_only(), vec![])).is_ok());
        let web = Policy {
            web_search: FeatureLevel::Allow,
            ..Default::default()
        };
        assert!(matches!(
            check(&desc(), &resolved(web, vec![])),
            Err(ConfigError::PolicyCapabilityUnsupported { .. })
        ));
        let deny = Policy {
            approvals: ApprovalPolicy {
                permission: ApprovalMode::AutoDeny,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(matches!(
            check(&desc(), &resolved(deny, vec![])),
            Err(ConfigError::HumanDecisionModeUnsupported {
                kind: DecisionKind::Permission,
                ..
            })
        ));
        let all_deny = Policy {
            approvals: ApprovalPolicy::auto_deny_all(),
            ..Default::default()
        };
        assert!(
            check(&desc(), &resolved(all_deny, vec![])).is_err(),
            "auto-deny-all needs all three kinds"
        );
    }

    #[test]
    fn auto_deny_all_needs_auto_deny_support_for_each_of_the_three_kinds() {
        let all_deny = || Policy {
            approvals: ApprovalPolicy::auto_deny_all(),
            ..Default::default()
        };
        let full = || RunPolicyCaps {
            permission: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            plan_review: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            question: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            ..Default::default()
        };
        let with = |caps: RunPolicyCaps| Descriptor {
            driver_type: "t".into(),
            run_policy: caps,
            ..Default::default()
        };
        assert!(check(&with(full()), &resolved(all_deny(), vec![])).is_ok());
        for missing in [
            DecisionKind::Permission,
            DecisionKind::PlanReview,
            DecisionKind::Question,
        ] {
            let mut caps = full();
            match missing {
                DecisionKind::Permission => caps.permission = vec![DecisionMode::Ask],
                DecisionKind::PlanReview => caps.plan_review = vec![DecisionMode::Ask],
                DecisionKind::Question => caps.question = vec![DecisionMode::Ask],
            }
            assert!(
                matches!(
                    check(&with(caps), &resolved(all_deny(), vec![])),
                    Err(ConfigError::HumanDecisionModeUnsupported { kind, mode: DecisionMode::AutoDeny, .. })
                        if kind == missing
                ),
                "auto-deny for every kind needs it for {missing:?} too"
            );
        }
        // The inherited question default (auto-deny) is portable: it needs no declaration.
        let mut caps = full();
        caps.question = vec![];
        let only_binary = Policy {
            approvals: ApprovalPolicy {
                permission: ApprovalMode::AutoDeny,
                plan_review: ApprovalMode::AutoDeny,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(check(&with(caps), &resolved(only_binary, vec![])).is_ok());
    }

    #[test]
    fn mcp_transport_and_shape_are_checked() {
        let http = McpServer::http("h", "http://127.0.0.1:9/mcp");
        assert!(matches!(
            check(&desc(), &resolved(Policy::default(), vec![http])),
            Err(ConfigError::McpTransportUnsupported { .. })
        ));
        let bad = McpServer::stdio("s", "", vec![]);
        assert!(matches!(
            check(&desc(), &resolved(Policy::default(), vec![bad])),
            Err(ConfigError::InvalidMcpConfig(_))
        ));
        let ok = McpServer::stdio("s", "tool", vec![]);
        assert!(
            check(&desc(), &resolved(Policy::default(), vec![ok.clone(), ok])).is_err(),
            "duplicate names"
        );
    }
}
