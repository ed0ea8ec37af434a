//! Segments, as `streameval/join/segments.py`'s `SegmentCapper`: the values of the configured
//! `segment_labels` of an impression; the first `max_segments` distinct combinations kept as
//! they are, any later one folded into `__other__` (every label). A list holds its segment as a
//! number (4 bytes), the segments themselves once here.

use crate::hash::Map;

pub const OTHER: &str = "__other__";

/// A segment's number: an index of [`SegmentCapper::segment`], or [`SegmentId::OTHER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentId(u32);

impl SegmentId {
    pub const OTHER: SegmentId = SegmentId(u32::MAX);
}

#[derive(Debug, Clone)]
pub struct SegmentCapper {
    labels: Vec<String>,
    max: usize,
    seen: Map<Box<[Box<str>]>, SegmentId>,
    segments: Vec<Box<[Box<str>]>>,
    other: Box<[Box<str>]>,
}

impl SegmentCapper {
    pub fn new(labels: Vec<String>, max_segments: usize) -> Self {
        let other = vec![Box::<str>::from(OTHER); labels.len()].into_boxed_slice();
        SegmentCapper {
            labels,
            max: max_segments,
            seen: Map::default(),
            segments: Vec::new(),
            other,
        }
    }

    /// The (capped) segment of an impression with these labels (`get` of each segment label,
    /// `""` when absent).
    pub fn segment_of<'a>(&mut self, get: impl Fn(&str) -> Option<&'a str>) -> SegmentId {
        let key: Box<[Box<str>]> = self
            .labels
            .iter()
            .map(|name| get(name).unwrap_or("").into())
            .collect();
        if let Some(&id) = self.seen.get(&key) {
            return id;
        }
        if self.seen.len() >= self.max {
            return SegmentId::OTHER;
        }
        let id = SegmentId(self.segments.len() as u32);
        self.segments.push(key.clone());
        self.seen.insert(key, id);
        id
    }

    /// The values of segment `id`, in the order of the segment labels.
    pub fn segment(&self, id: SegmentId) -> &[Box<str>] {
        if id == SegmentId::OTHER {
            &self.other
        } else {
            &self.segments[id.0 as usize]
        }
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(c: &mut SegmentCapper, labels: &[(&'static str, &'static str)]) -> Vec<String> {
        let id = c.segment_of(|k| labels.iter().find(|(n, _)| *n == k).map(|(_, v)| *v));
        c.segment(id).iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn capped_in_order_of_first_sight() {
        let mut c = SegmentCapper::new(vec!["ranker".into(), "arm".into()], 2);
        type Case<'a> = (&'a [(&'a str, &'a str)], [&'a str; 2]);
        let table: &[Case] = &[
            (&[("ranker", "a"), ("arm", "x")], ["a", "x"]),
            (&[("arm", "y")], ["", "y"]),
            (&[("ranker", "b"), ("arm", "x")], [OTHER, OTHER]),
            (&[("ranker", "a"), ("arm", "x"), ("other", "z")], ["a", "x"]),
            (&[("arm", "y")], ["", "y"]),
            (&[], [OTHER, OTHER]),
        ];
        for (labels, want) in table {
            assert_eq!(of(&mut c, labels), want.to_vec(), "{labels:?}");
        }
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn no_labels_one_segment() {
        let mut c = SegmentCapper::new(vec![], 1);
        assert!(of(&mut c, &[("a", "b")]).is_empty());
        assert!(of(&mut c, &[]).is_empty());
        assert_eq!(c.len(), 1);
    }
}
