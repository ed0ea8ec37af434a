//! How interactions become implicit grades, as `InteractionGrades` of
//! `streameval/join/open_lists.py` (DESIGN §3, `implicit_grades`, `dwell_grade`).

use crate::decode::Click;

/// How interactions become implicit grades (DESIGN §3, `implicit_grades`, `dwell_grade`).
#[derive(Debug, Clone)]
pub struct InteractionGrades {
    pub by_action: Vec<(String, f64)>,
    pub dwell_min_ms: i64,
    pub dwell_grade: f64,
}

/// Python's `max(a, b)`: `b` only when it is greater (so `max(0.0, -0.0)` is `0.0`).
pub fn py_max(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

impl InteractionGrades {
    pub fn grade(&self, click: &Click) -> f64 {
        let mut grade = self
            .by_action
            .iter()
            .find(|(action, _)| *action == click.action)
            .map_or(0.0, |(_, g)| *g);
        if let Some(dwell) = click.dwell_ms {
            // (an exact float/int comparison as Python's for |min_ms| < 2**53)
            if dwell >= self.dwell_min_ms as f64 {
                grade = py_max(grade, self.dwell_grade);
            }
        }
        grade
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(action: &str, dwell: Option<f64>) -> Click {
        Click {
            request_id: "r".into(),
            doc_id: "d".into(),
            timestamp: 0,
            action: action.into(),
            dwell_ms: dwell,
            position: None,
            event_id: None,
        }
    }

    #[test]
    fn grades_of_actions_and_dwell() {
        let g = InteractionGrades {
            by_action: vec![("click".into(), 1.0), ("purchase".into(), 3.0)],
            dwell_min_ms: 30_000,
            dwell_grade: 2.0,
        };
        // (action, dwell, grade)
        let table = [
            ("click", None, 1.0),
            ("click", Some(29_999.9), 1.0),
            ("click", Some(30_000.0), 2.0),
            ("purchase", Some(1e9), 3.0),
            ("hover", None, 0.0),
            ("hover", Some(30_000.0), 2.0),
        ];
        for (action, dwell, want) in table {
            assert_eq!(g.grade(&click(action, dwell)), want, "{action} {dwell:?}");
        }
        assert!(py_max(0.0, -0.0).is_sign_positive() && py_max(-0.0, 0.0).is_sign_negative());
    }
}
