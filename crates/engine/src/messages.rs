//! The processes of a replay as seed 001 sees them: where every recorded process stands in
//! the latest consistent global state around the current stop of the replayed one, from the
//! messages matched in the trace's links (`hindsight-causal`).
//!
//! Only the replayed process runs; the others are placed by computation, not replayed (their
//! places are events of their streams). Built from the trace at each call: the links are
//! small next to the events, and a session that never asks pays nothing.

use anyhow::{anyhow, Context as _};
use hindsight_causal::{Causality, Cut};
use hindsight_trace::TraceReader;

use crate::session::Session;

/// The consistent global state around a stop.
#[derive(Debug, Clone)]
pub struct ConsistentStop {
    /// Happens-before of the recording (channels, messages, clocks).
    pub causality: Causality,
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

    /// The latest consistent global state of the recording's processes in which the replayed
    /// process stands where it is now (`info messages`).
    pub fn consistent_stop(&mut self) -> anyhow::Result<ConsistentStop> {
        let Some(opts) = self.replay_opts.as_ref() else {
            return Err(anyhow!(
                "Messages between processes are known only in a replay."
            ));
        };
        let trace = opts.trace.clone();
        let r = TraceReader::open(&trace)?;
        let links = r.links()?.ok_or_else(|| {
            anyhow!("This trace was recorded before hindsight followed messages between processes.")
        })?;
        let causality =
            Causality::build(&links, r.processes()).context("reading the trace's messages")?;
        let here = self.position()?;
        let stopped = self.user_pid();
        let cut = causality
            .cut(stopped, here.event)
            .ok_or_else(|| anyhow!("Process {stopped} is not in the trace's links."))?;
        Ok(ConsistentStop {
            causality,
            cut,
            stopped,
        })
    }
}
