//! End-to-end tests: the real `mcp-chaos` binary against the fixture server (correct, and with
//! each flaw planted), against servers that misbehave at start, and through its CLI surface.

mod action;
mod auth;
mod browser;
mod chaos;
mod cli;
mod faults;
mod features;
mod generated;
mod hostile;
mod house;
mod http;
mod invariants;
mod lifecycle;
mod report;

/// Every flaw the fixture can plant has an end-to-end case, in one of the modules, that
/// proves mcp-chaos catches it as its declared invariant.
#[test]
fn every_flaw_has_an_end_to_end_case() {
    use mcp_chaos_fixture::Flaw;
    let covered: Vec<&str> = invariants::PROTOCOL_FLAWS
        .iter()
        .chain(faults::FAULT_FLAWS)
        .chain(faults::SCOPED_FAULT_FLAWS)
        .chain(faults::REACH_FLAWS)
        .chain(http::HTTP_FLAWS)
        .chain(chaos::CHAOS_FLAWS)
        .chain(generated::GENERATED_FLAWS)
        .chain(invariants::WEDGE_FLAWS)
        .chain(wire::WIRE_FLAWS)
        .chain(features::FEATURE_FLAWS)
        .chain(features::FEATURE_UPSTREAM_FLAWS)
        .chain(lifecycle::LIFECYCLE_FLAWS)
        .chain(invariants::EOF_FLAWS)
        .copied()
        .collect();
    for flaw in Flaw::ALL {
        assert!(
            covered.contains(&flaw.name()),
            "no end-to-end case for the flaw {flaw}"
        );
    }
}
mod rerun;
mod robustness;
mod run_reports;
mod scenario;
mod select;
mod wire;
