//! The processes of a replay as seed 001 sees them: where every recorded process stands in
//! the latest consistent global state around the current stop of the replayed one, from the
//! messages matched in the trace's links (`hindsight-causal`).
//!
//! Built from the trace's links when first asked (a session that never asks pays nothing);
//! the places are events of the processes' streams. In a replay of the tree the other
//! processes are replayed to those places when the user switches to them
//! ([`crate::inferiors`]).

use anyhow::anyhow;
use hindsight_causal::{Causality, Cut};
use hindsight_trace::TraceReader;

use crate::session::Session;

/// The consistent global state around a stop.
#[derive(Debug, Clone)]
pub struct ConsistentStop {
    /// Happens-before of the recording (channels, messages, clocks), the session's own.
    pub causality: std::rc::Rc<Causality>,
    /// Where every process stands.
    pub cut: Cut,
    /// The recorded pid of the process that stopped (the replayed one).
    pub stopped: i32,
}

impl Session {
    /// The recorded pids of every process of the trace being replayed, in the trace's order
    /// (empty for a live session).
    pub fn recorded_processes(&self) -> anyhow::Result<Vec<i32>> {
        let Some(opts) = self.replay_opts.as_ref() else {
            return Ok(Vec::new());
        };
        let r = TraceReader::open(&opts.trace)?;
        Ok(r.processes().iter().map(|p| p.pid).collect())
    }

    /// The latest consistent global state of the recording's processes around the current
    /// stop (`info messages`): in a replay of one process, the state in which it stands where
    /// it is now; in a replay of the tree, the state every inferior is placed at.
    pub fn consistent_stop(&mut self) -> anyhow::Result<ConsistentStop> {
        if self.replay_opts.is_none() {
            return Err(anyhow!(
                "Messages between processes are known only in a replay."
            ));
        }
        let (causality, cut, stopped) = self.anchored_cut()?;
        Ok(ConsistentStop {
            causality,
            cut,
            stopped,
        })
    }
}
