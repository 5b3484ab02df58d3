//! Thread stores: checkpoints, leases, receipts, the run event log and pending approvals.
