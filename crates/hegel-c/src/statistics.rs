//! The end-of-run statistics report (`show_statistics`): for each event
//! label, the share of valid generated test cases that recorded it; for each
//! value label, a summary of the values observed.

use crate::test_case::Observations;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Observations gathered over a run's valid generated test cases.
#[derive(Debug, Default)]
pub struct Statistics {
    cases: u64,
    counts: BTreeMap<String, u64>,
    values: BTreeMap<String, Vec<f64>>,
}

impl Statistics {
    /// Folds in one valid test case's observations.
    pub fn record(&mut self, observations: &Observations) {
        self.cases += 1;
        for label in &observations.events {
            *self.counts.entry(label.clone()).or_insert(0) += 1;
        }
        for (label, value) in &observations.values {
            self.values.entry(label.clone()).or_default().push(*value);
        }
    }

    /// Renders the report.
    pub fn report(&self) -> String {
        let mut out = String::new();
        if self.counts.is_empty() && self.values.is_empty() {
            let _ = write!(
                out,
                "Statistics (over {} test cases): no events were recorded; record them with \
                 tc.event(..) or tc.event_value(..)",
                self.cases
            );
            return out;
        }
        let _ = write!(out, "Statistics (over {} test cases):", self.cases);
        for (label, count) in &self.counts {
            let percent = 100.0 * *count as f64 / self.cases.max(1) as f64;
            let _ = write!(out, "\n  * {label}: {percent:.1}% of test cases");
        }
        for (label, values) in &self.values {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            let count = sorted.len();
            let median = if count % 2 == 1 {
                sorted[count / 2]
            } else {
                (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0
            };
            let mean = sorted.iter().sum::<f64>() / count as f64;
            // Nearest rank: the smallest index covering 90% of the values.
            let p90 = sorted[((count as f64 * 0.9).ceil() as usize).max(1) - 1];
            let _ = write!(
                out,
                "\n  * {label}: count {count}, min {}, median {median}, mean {mean:.2}, p90 {p90}, max {}",
                sorted[0],
                sorted[count - 1]
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_summarises_events_and_values() {
        let mut stats = Statistics::default();
        for n in 0..10 {
            stats.record(&Observations {
                events: if n == 0 { vec!["zero".into()] } else { vec![] },
                values: vec![("n".into(), f64::from(n))],
            });
        }
        let report = stats.report();
        assert!(
            report.starts_with("Statistics (over 10 test cases):"),
            "{report}"
        );
        assert!(report.contains("* zero: 10.0% of test cases"), "{report}");
        assert!(
            report.contains("* n: count 10, min 0, median 4.5, mean 4.50, p90 8, max 9"),
            "{report}"
        );
    }

    #[test]
    fn no_events_points_at_the_recording_api() {
        let report = Statistics::default().report();
        assert!(report.contains("no events were recorded"), "{report}");
    }
}
