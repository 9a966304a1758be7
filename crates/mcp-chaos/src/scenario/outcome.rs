//! Events of a scenario suite run, for progress displays; the suite report itself (the input
//! of every suite reporter) is `mcp_chaos_model::suite`, re-exported here.

pub use mcp_chaos_model::suite::{
    BaselineEntry, FindingStatus, ScenarioFinding, ScenarioReport, ScenarioStatus, StepReport,
    SuiteReport, suite_report_json_schema,
};

use crate::run::Event;

/// What happens during a suite run, for progress displays. Scenarios run concurrently, so
/// events of different scenarios interleave; each names its scenario.
#[derive(Debug)]
pub enum SuiteEvent<'a> {
    /// A scenario starts (its server is being started).
    Started {
        /// The scenario's name (`Scenario::name`).
        name: &'a str,
        /// Its number of steps.
        steps: usize,
    },
    /// One of the scenario's steps starts.
    Step {
        /// The scenario's name.
        name: &'a str,
        /// The step's label in reports (its `name`, or one made from its action).
        label: &'a str,
    },
    /// Something happened inside the scenario's campaign.
    Run {
        /// The scenario's name.
        name: &'a str,
        /// The campaign event, as [`crate::run::Event`] reports it.
        event: &'a Event<'a>,
    },
    /// A scenario ended (passed, failed or errored); sent once per scenario.
    Finished {
        /// The scenario's finished report, as it appears in the suite report.
        report: &'a ScenarioReport,
    },
}
