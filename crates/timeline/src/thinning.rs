//! Which automatic checkpoints to keep (DESIGN.md: "thinning old ones (keep O(log n))").
//!
//! The newest few are all kept (going back a little is the common case); of the older ones,
//! the two oldest per power-of-two distance from the newest, so that going back by d events
//! finds a checkpoint within about 2d before the target, and n checkpoints taken over a
//! recording leave O(log n) of them.

/// For checkpoints at `events` (sorted, oldest first): which to keep. The newest `recent`
/// are always kept.
pub fn keep(events: &[u64], recent: usize) -> Vec<bool> {
    let n = events.len();
    let mut keep = vec![true; n];
    let Some(&newest) = events.last() else {
        return keep;
    };
    let mut per_bucket = std::collections::HashMap::<u32, usize>::new();
    // Oldest first: the oldest of each distance class stay, so the reach back never shrinks.
    for i in 0..n.saturating_sub(recent) {
        let age = newest.saturating_sub(events[i]);
        let bucket = 64 - age.leading_zeros();
        let c = per_bucket.entry(bucket).or_insert(0);
        *c += 1;
        keep[i] = *c <= 2;
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_recent_ones_and_a_logarithmic_number_of_old_ones() {
        // One checkpoint every 10 events, thinned after each, as a replay takes them.
        let mut kept: Vec<u64> = Vec::new();
        for t in (0..100_000u64).step_by(10) {
            kept.push(t);
            let k = keep(&kept, 8);
            let mut i = 0;
            kept.retain(|_| {
                i += 1;
                k[i - 1]
            });
        }
        assert!(kept.len() <= 8 + 2 * 18, "{} kept: {kept:?}", kept.len());
        // The newest eight are all there, and the oldest still reaches far back.
        let newest = *kept.last().unwrap_or(&0);
        assert_eq!(newest, 99_990);
        assert!(kept.windows(2).rev().take(7).all(|w| w[1] - w[0] == 10));
        assert!(kept[0] < 50_000, "{kept:?}");
        // Going back d events from the newest finds a checkpoint within 2d before that.
        for d in [100u64, 1_000, 10_000, 50_000] {
            let target = newest - d;
            let before = kept
                .iter()
                .rev()
                .find(|&&e| e <= target)
                .copied()
                .unwrap_or(0);
            assert!(target - before <= 2 * d, "d={d}: {before} for {target}");
        }
    }

    #[test]
    fn nothing_to_thin() {
        assert!(keep(&[], 8).is_empty());
        assert_eq!(keep(&[1, 2, 3], 8), vec![true; 3]);
    }
}
