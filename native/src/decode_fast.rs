//! The fast path of `decode::decode_native`: a record of the usual native shapes (impression,
//! click, judgment) read with jiter's streaming `Jiter` straight into the event, no JSON tree,
//! each string allocated once. It answers `Some(event)` only when it is certain the tree path
//! answers the same valid event; anything unusual (an unknown or escaped key, a duplicate key, a
//! value of a type or a range it does not take, a JSON error of any kind) is `None`, and the
//! tree path decides the record: every invalid reason and detail stays the tree path's.
//!
//! The values go through the tree path's own rules (`bounded_str`, `strict_float`,
//! `to_epoch_ms`, `action_of`, `query_id_from`) on a borrowed scalar `JsonValue`, and jiter's
//! `next_number`/`next_str` are the parser the tree is built by, so a number or a string reads
//! alike.

use std::borrow::Cow;

use jiter::{Jiter, JsonValue, NumberAny, NumberInt, Peek};

use crate::bounds::*;
use crate::decode::{
    action_of, bounded_str, query_id_from, strict_float, Click, Event, Impression, Judgment,
    Results,
};
use crate::event_time::to_epoch_ms;

/// The keys the fast path reads, one bit each.
#[derive(Clone, Copy)]
enum Key {
    Type,
    RequestId,
    DocId,
    Timestamp,
    Query,
    QueryId,
    EventId,
    Results,
    Labels,
    Action,
    DwellMs,
    Position,
    Grade,
    Judge,
}

impl Key {
    /// A key as its raw bytes in the record (an escaped key is not one of these: `None`).
    fn of(raw: &[u8]) -> Option<Key> {
        Some(match raw {
            b"type" => Key::Type,
            b"request_id" => Key::RequestId,
            b"doc_id" => Key::DocId,
            b"timestamp" => Key::Timestamp,
            b"query" => Key::Query,
            b"query_id" => Key::QueryId,
            b"event_id" => Key::EventId,
            b"results" => Key::Results,
            b"labels" => Key::Labels,
            b"action" => Key::Action,
            b"dwell_ms" => Key::DwellMs,
            b"position" => Key::Position,
            b"grade" => Key::Grade,
            b"judge" => Key::Judge,
            _ => return None,
        })
    }

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

const fn bits(keys: &[Key]) -> u32 {
    let mut out = 0;
    let mut i = 0;
    while i < keys.len() {
        out |= 1 << keys[i] as u32;
        i += 1;
    }
    out
}

use Key::*;

const IMPRESSION_KEYS: u32 = bits(&[
    Type, RequestId, Timestamp, Results, Query, QueryId, Labels, EventId,
]);
const IMPRESSION_REQUIRED: u32 = bits(&[RequestId, Timestamp, Results]);
const CLICK_KEYS: u32 = bits(&[
    Type, RequestId, DocId, Timestamp, Action, DwellMs, Position, EventId,
]);
const CLICK_REQUIRED: u32 = bits(&[RequestId, DocId, Timestamp]);
const JUDGMENT_KEYS: u32 = bits(&[
    Type, QueryId, Query, DocId, Grade, Timestamp, Judge, EventId,
]);
const JUDGMENT_REQUIRED: u32 = bits(&[DocId, Grade, Timestamp]);

#[derive(Clone, Copy, PartialEq)]
enum Tag {
    Impression,
    Click,
    Judgment,
}

/// The fields read, each once (a duplicate key is refused before its value is read).
#[derive(Default)]
struct Read {
    tag: Option<Tag>,
    request_id: Option<String>,
    doc_id: Option<String>,
    timestamp: Option<i64>,
    query: Option<String>,
    query_id: Option<String>,
    event_id: Option<String>,
    results: Option<Results>,
    labels: Vec<(String, String)>,
    action: Option<String>,
    dwell_ms: Option<f64>,
    position: Option<i64>,
    grade: Option<f64>,
    judge: Option<String>,
}

/// The record as a valid event, or `None`: take the tree path.
pub fn decode_fast(raw: &[u8]) -> Option<Event> {
    let mut jiter = Jiter::new(raw);
    let mut read = Read::default();
    let mut seen = 0u32;
    let mut next = jiter.next_object_bytes().ok()?.map(Key::of);
    while let Some(key) = next {
        let key = key?;
        if seen & key.bit() != 0 {
            return None; // a duplicate key: the last wins in the tree path, left to it
        }
        seen |= key.bit();
        read.field(key, &mut jiter)?;
        next = jiter.next_key_bytes().ok()?.map(Key::of);
    }
    jiter.finish().ok()?;
    let (keys, required) = match read.tag? {
        Tag::Impression => (IMPRESSION_KEYS, IMPRESSION_REQUIRED),
        Tag::Click => (CLICK_KEYS, CLICK_REQUIRED),
        Tag::Judgment => (JUDGMENT_KEYS, JUDGMENT_REQUIRED),
    };
    if seen & !keys != 0 || seen & required != required {
        return None;
    }
    read.event()
}

impl Read {
    fn field(&mut self, key: Key, j: &mut Jiter) -> Option<()> {
        match key {
            Type => {
                self.tag = Some(match j.next_bytes().ok()? {
                    b"impression" => Tag::Impression,
                    b"click" => Tag::Click,
                    b"judgment" => Tag::Judgment,
                    _ => return None,
                })
            }
            RequestId => self.request_id = Some(required_str(j, 1, MAX_ID_CHARS)?),
            DocId => self.doc_id = Some(required_str(j, 1, MAX_ID_CHARS)?),
            Timestamp => self.timestamp = Some(timestamp(j)?),
            Query => self.query = optional_str(j, 0, MAX_QUERY_CHARS)?,
            QueryId => self.query_id = optional_str(j, 1, MAX_ID_CHARS)?,
            EventId => self.event_id = optional_str(j, 1, MAX_ID_CHARS)?,
            Results => self.results = Some(results(j)?),
            Labels => self.labels = labels(j)?,
            Action => {
                self.action = match j.peek().ok()? {
                    Peek::Null => {
                        j.known_null().ok()?;
                        None
                    }
                    Peek::String => Some(action_of(j.known_str().ok()?)?),
                    _ => return None,
                }
            }
            DwellMs => {
                self.dwell_ms = match j.peek().ok()? {
                    Peek::Null => {
                        j.known_null().ok()?;
                        None
                    }
                    peek => {
                        let n = number(j, peek)?;
                        Some(strict_float(&n, 0.0, MAX_DWELL_MS, "", "").ok()?)
                    }
                }
            }
            Position => {
                self.position = match j.peek().ok()? {
                    Peek::Null => {
                        j.known_null().ok()?;
                        None
                    }
                    peek => match number(j, peek)? {
                        JsonValue::Int(i) if (1..=MAX_POSITION).contains(&i) => Some(i),
                        _ => return None,
                    },
                }
            }
            Grade => {
                let peek = j.peek().ok()?;
                let n = number(j, peek)?;
                self.grade = Some(strict_float(&n, MIN_GRADE, MAX_GRADE, "", "").ok()?);
            }
            Judge => {
                self.judge = match j.peek().ok()? {
                    Peek::Null => {
                        j.known_null().ok()?;
                        None
                    }
                    Peek::String => Some(str_value(j, 0, MAX_JUDGE_CHARS)?),
                    _ => return None,
                }
            }
        }
        Some(())
    }

    fn event(self) -> Option<Event> {
        match self.tag? {
            Tag::Impression => {
                let (doc_ids, teams) = self.results?;
                let query_id = match (self.query_id, &self.query) {
                    (Some(id), _) => id,
                    (None, Some(q)) => query_id_from(q).ok()?,
                    (None, None) => String::new(),
                };
                Some(Event::Impression(Impression {
                    request_id: self.request_id?,
                    timestamp: self.timestamp?,
                    doc_ids,
                    query: self.query,
                    query_id,
                    labels: self.labels,
                    event_id: self.event_id,
                    teams,
                }))
            }
            Tag::Click => Some(Event::Click(Click {
                request_id: self.request_id?,
                doc_id: self.doc_id?,
                timestamp: self.timestamp?,
                action: self.action.unwrap_or_else(|| "click".to_owned()),
                dwell_ms: self.dwell_ms,
                position: self.position,
                event_id: self.event_id,
            })),
            Tag::Judgment => {
                let query_id = match (self.query_id, &self.query) {
                    (Some(id), _) => id,
                    (None, Some(q)) => Some(query_id_from(q).ok()?).filter(|id| !id.is_empty())?,
                    (None, None) => return None,
                };
                Some(Event::Judgment(Judgment {
                    query_id,
                    query: self.query,
                    doc_id: self.doc_id?,
                    grade: self.grade?,
                    timestamp: self.timestamp?,
                    judge: self.judge.unwrap_or_default(),
                    event_id: self.event_id,
                }))
            }
        }
    }
}

/// A JSON number as the tree holds it (`Int` or `Float`); a big integer is `None`.
fn number(j: &mut Jiter, peek: Peek) -> Option<JsonValue<'static>> {
    if !peek.is_num() {
        return None;
    }
    match j.known_number(peek).ok()? {
        NumberAny::Int(NumberInt::Int(i)) => Some(JsonValue::Int(i)),
        NumberAny::Int(NumberInt::BigInt(_)) => None,
        NumberAny::Float(f) => Some(JsonValue::Float(f)),
    }
}

/// The next value, a string of `min..=max` characters, owned.
fn str_value(j: &mut Jiter, min: usize, max: usize) -> Option<String> {
    let s = j.known_str().ok()?;
    bounded_str(&JsonValue::Str(Cow::Borrowed(s)), min, max).ok()
}

fn required_str(j: &mut Jiter, min: usize, max: usize) -> Option<String> {
    match j.peek().ok()? {
        Peek::String => str_value(j, min, max),
        _ => None,
    }
}

/// A nullable string: `Some(None)` for null.
fn optional_str(j: &mut Jiter, min: usize, max: usize) -> Option<Option<String>> {
    match j.peek().ok()? {
        Peek::Null => {
            j.known_null().ok()?;
            Some(None)
        }
        Peek::String => Some(Some(str_value(j, min, max)?)),
        _ => None,
    }
}

fn timestamp(j: &mut Jiter) -> Option<i64> {
    match j.peek().ok()? {
        Peek::String => to_epoch_ms(&JsonValue::Str(Cow::Borrowed(j.known_str().ok()?))),
        peek => to_epoch_ms(&number(j, peek)?),
    }
}

/// `results`: 1..=MAX_RESULTS items, each an id or `{doc_id, score?, team?}`.
fn results(j: &mut Jiter) -> Option<Results> {
    if j.peek().ok()? != Peek::Array {
        return None;
    }
    // the usual list fits (no reallocation); the teams only once one is given
    let mut doc_ids = Vec::with_capacity(16);
    let mut teams: Vec<Option<String>> = Vec::new();
    let mut next = j.known_array().ok()?;
    while let Some(peek) = next {
        if doc_ids.len() == MAX_RESULTS {
            return None;
        }
        let (id, team) = match peek {
            Peek::String => (str_value(j, 1, MAX_ID_CHARS)?, None),
            Peek::Object => result_object(j)?,
            _ => return None,
        };
        if team.is_some() || !teams.is_empty() {
            teams.resize(doc_ids.len(), None);
            teams.push(team);
        }
        doc_ids.push(id);
        next = j.array_step().ok()?;
    }
    if doc_ids.is_empty() {
        return None;
    }
    if teams.is_empty() {
        return Some((doc_ids, None));
    }
    teams.resize(doc_ids.len(), None);
    Some((doc_ids, Some(teams)))
}

/// A result item `{doc_id, score?, team?}` (Solr's form and anything else: `None`).
fn result_object(j: &mut Jiter) -> Option<(String, Option<String>)> {
    const DOC_ID: u8 = 1;
    const SCORE: u8 = 2;
    const TEAM: u8 = 4;
    let mut seen = 0u8;
    let mut id = None;
    let mut team = None;
    fn bit(raw: &[u8]) -> u8 {
        match raw {
            b"doc_id" => DOC_ID,
            b"score" => SCORE,
            b"team" => TEAM,
            _ => 0,
        }
    }
    let mut next = j.next_object_bytes().ok()?.map(bit);
    while let Some(b) = next {
        if b == 0 || seen & b != 0 {
            return None;
        }
        seen |= b;
        match b {
            DOC_ID => id = Some(required_str(j, 1, MAX_ID_CHARS)?),
            TEAM => team = optional_str(j, 1, MAX_ID_CHARS)?,
            _ => match j.peek().ok()? {
                // lax float: null, a bool or an integer pass; a float must be finite
                Peek::Null => j.known_null().ok()?,
                Peek::True | Peek::False => {
                    j.next_bool().ok()?;
                }
                peek => match number(j, peek)? {
                    JsonValue::Float(f) if !f.is_finite() => return None,
                    _ => {}
                },
            },
        }
        next = j.next_key_bytes().ok()?.map(bit);
    }
    Some((id?, team))
}

/// `labels`: null, or an object of at most MAX_LABELS string pairs, no duplicate key.
fn labels(j: &mut Jiter) -> Option<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    match j.peek().ok()? {
        Peek::Null => {
            j.known_null().ok()?;
            return Some(out);
        }
        Peek::Object => {}
        _ => return None,
    }
    let mut next = j.known_object().ok()?.map(str::to_owned);
    while let Some(key) = next {
        if out.len() == MAX_LABELS || out.iter().any(|(k, _)| *k == key) {
            return None;
        }
        bounded_str(&JsonValue::Str(Cow::Borrowed(&key)), 1, MAX_LABEL_KEY_CHARS).ok()?;
        let value = required_str(j, 0, MAX_LABEL_VALUE_CHARS)?;
        out.push((key, value));
        next = j.next_key().ok()?.map(str::to_owned);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::decode_native_tree;

    /// Each record: whether the fast path must take it, and (always) that what it answers is the
    /// tree path's answer and that `decode_native` answers as the tree path does.
    #[test]
    fn fast_path_equals_tree_path() {
        let imp = r#""type":"impression","request_id":"r","timestamp":5,"results":["a","b"]"#;
        let click = r#""type":"click","request_id":"r","doc_id":"d","timestamp":5"#;
        let judg = r#""type":"judgment","query_id":"q","doc_id":"d","grade":1,"timestamp":5"#;
        let taken: Vec<String> = vec![
            format!("{{{imp}}}"),
            format!(" \n{{ {imp} }}\t\r\n"),
            format!(r#"{{{imp},"query":"  Red  Shoes ","labels":{{"arm":"t","ranker":""}},"event_id":"e"}}"#),
            format!(r#"{{{imp},"query":null,"query_id":null,"labels":null,"event_id":null}}"#),
            format!(r#"{{{imp},"query":"Straße \u00c5"}}"#),
            format!(r#"{{{imp},"query":"x","query_id":"given"}}"#),
            r#"{"results":[{"doc_id":"a","score":1.5,"team":"A"},{"doc_id":"b","team":null},"c",{"doc_id":"d","score":null},{"score":true,"doc_id":"e"},{"doc_id":"f","score":3}],"timestamp":"2026-01-01T00:00:00Z","request_id":"r","type":"impression"}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[{"doc_id":"a"}]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":["a",{"doc_id":"b","team":"B"},"c"]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":["a",{"doc_id":"b","team":null}]}"#.into(),
            r#"{"type":"impression","request_id":"r\u00e9\ud83d\ude00","timestamp":5,"results":["\u0041"],"labels":{"k\u00e9":"v\n"}}"#.into(),
            format!("{{{click}}}"),
            format!(r#"{{{click},"action":"  PURCHASE ","dwell_ms":12.5,"position":3,"event_id":"e"}}"#),
            format!(r#"{{{click},"action":null,"dwell_ms":null,"position":null,"event_id":null}}"#),
            format!(r#"{{{click},"dwell_ms":0,"position":1000000}}"#),
            format!(r#"{{{click},"dwell_ms":1e3,"position":1}}"#),
            format!(r#"{{{click},"dwell_ms":1E+12}}"#),
            r#"{"timestamp":1767225600000.9,"doc_id":"d","request_id":"r","type":"click"}"#.into(),
            r#"{"timestamp":"1767225600000","doc_id":"d","request_id":"r","type":"click"}"#.into(),
            r#"{"timestamp":"2026-01-01 10:00:00.5+02:00","doc_id":"d","type":"click","request_id":"r"}"#.into(),
            r#"{"timestamp":1.5e3,"doc_id":"d","type":"click","request_id":"r"}"#.into(),
            format!("{{{judg}}}"),
            format!(r#"{{{judg},"judge":"rater","event_id":"e","query":"q text"}}"#),
            format!(r#"{{{judg},"judge":null,"event_id":null,"query":null}}"#),
            r#"{"type":"judgment","query":" Blue  JEANS ","doc_id":"d","grade":-2.5e2,"timestamp":5}"#.into(),
            r#"{"type":"judgment","query_id":"q","query":"","doc_id":"d","grade":1000,"timestamp":0}"#.into(),
            r#"{"timestamp":5,"grade":0.5,"doc_id":"d","query_id":"q","type":"judgment"}"#.into(),
        ];
        let fallback: Vec<String> = vec![
            // unusual shapes the tree path decides (some valid, some not)
            format!(r#"{{{imp},"extra":1}}"#),
            format!(r#"{{{imp},"request_id":"again"}}"#),
            format!(r#"{{{imp},"type":"click","doc_id":"d"}}"#),
            format!(r#"{{{imp},"labels":{{"a":"1","a":"2"}}}}"#),
            format!(r#"{{{imp},"doc_id":"d"}}"#),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[{"id":"a","[interleaving]":"A"}]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[{"doc_id":"a","score":"1.5"}]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[{"doc_id":"a","doc_id":"b"}]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[{"doc_id":"a","x":1}]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[""]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":[5]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":"a"}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":["a"],"labels":{"":"v"}}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":["a"],"labels":[]}"#.into(),
            r#"{"type":"impression","request_id":"r","timestamp":5,"results":["a"],"query_id":""}"#.into(),
            r#"{"typ\u0065":"click","request_id":"r","doc_id":"d","timestamp":5}"#.into(),
            r#"{"type":"cl\u0069ck","request_id":"r","doc_id":"d","timestamp":5}"#.into(),
            r#"{"type":"view","request_id":"r","doc_id":"d","timestamp":5}"#.into(),
            r#"{"type":5,"request_id":"r","doc_id":"d","timestamp":5}"#.into(),
            r#"{"request_id":"r","doc_id":"d","timestamp":5}"#.into(),
            format!("{{{click},\"timestamp\":6}}"),
            format!(r#"{{{click},"dwell_ms":-1}}"#),
            format!(r#"{{{click},"dwell_ms":NaN}}"#),
            format!(r#"{{{click},"dwell_ms":1e13}}"#),
            format!(r#"{{{click},"dwell_ms":true}}"#),
            format!(r#"{{{click},"position":0}}"#),
            format!(r#"{{{click},"position":2.0}}"#),
            format!(r#"{{{click},"position":99999999999999999999999}}"#),
            format!(r#"{{{click},"action":"   "}}"#),
            format!(r#"{{{click},"action":5}}"#),
            format!(r#"{{{click},"event_id":""}}"#),
            r#"{"type":"click","request_id":null,"doc_id":"d","timestamp":5}"#.into(),
            r#"{"type":"click","request_id":"r","doc_id":"d","timestamp":-1}"#.into(),
            r#"{"type":"click","request_id":"r","doc_id":"d","timestamp":true}"#.into(),
            r#"{"type":"click","request_id":"r","doc_id":"d","timestamp":"yesterday"}"#.into(),
            r#"{"type":"click","request_id":"r","doc_id":"d","timestamp":99999999999999999999}"#.into(),
            r#"{"type":"click","request_id":"r","doc_id":"d"}"#.into(),
            r#"{"type":"click","request_id":"\ud800","doc_id":"d","timestamp":5}"#.into(),
            format!("{{{click}}} x"),
            format!("{{{click}"),
            format!("[{{{click}}}]"),
            format!("\u{feff}{{{click}}}"),
            r#"{"type":"judgment","doc_id":"d","grade":1,"timestamp":5}"#.into(),
            r#"{"type":"judgment","query":"   ","doc_id":"d","grade":1,"timestamp":5}"#.into(),
            r#"{"type":"judgment","query_id":"q","doc_id":"d","grade":1001,"timestamp":5}"#.into(),
            r#"{"type":"judgment","query_id":"q","doc_id":"d","grade":null,"timestamp":5}"#.into(),
            r#"{"type":"judgment","query_id":"q","doc_id":"d","grade":"1","timestamp":5}"#.into(),
            r#"{"type":"judgment","query_id":"q","doc_id":"d","timestamp":5}"#.into(),
            format!(r#"{{{judg},"judge":5}}"#),
            format!(r#"{{{judg},"results":["a"]}}"#),
            "".into(),
            "{}".into(),
            "null".into(),
        ];
        let mut too_many_results =
            String::from(r#"{"type":"impression","request_id":"r","timestamp":5,"results":["#);
        too_many_results.push_str(&vec!["\"a\""; MAX_RESULTS + 1].join(","));
        too_many_results.push_str("]}");
        let mut too_many_labels = format!("{{{imp},\"labels\":{{");
        let pairs: Vec<String> = (0..=MAX_LABELS)
            .map(|i| format!("\"k{i}\":\"v\""))
            .collect();
        too_many_labels.push_str(&pairs.join(","));
        too_many_labels.push_str("}}");
        let mut at_caps =
            String::from(r#"{"type":"impression","request_id":"r","timestamp":5,"results":["#);
        at_caps.push_str(&vec!["\"a\""; MAX_RESULTS].join(","));
        at_caps.push_str("],\"labels\":{");
        let pairs: Vec<String> = (0..MAX_LABELS).map(|i| format!("\"k{i}\":\"v\"")).collect();
        at_caps.push_str(&pairs.join(","));
        at_caps.push_str("}}");
        let taken: Vec<String> = taken.into_iter().chain([at_caps]).collect();
        let fallback: Vec<String> = fallback
            .into_iter()
            .chain([too_many_results, too_many_labels])
            .collect();

        for (records, must_take) in [(&taken, true), (&fallback, false)] {
            for record in records {
                let raw = record.as_bytes();
                let tree = decode_native_tree(raw, usize::MAX);
                let fast = decode_fast(raw);
                assert_eq!(fast.is_some(), must_take, "{record}: {fast:?} / {tree:?}");
                if let Some(event) = fast {
                    assert_eq!(Ok(event), tree, "{record}");
                }
                assert_eq!(
                    crate::decode::decode_native(raw, usize::MAX),
                    tree,
                    "{record}"
                );
            }
        }
    }

    /// Every key order of a click with all its fields: the same event.
    #[test]
    fn key_orders() {
        let pairs = [
            r#""type":"click""#,
            r#""request_id":"r""#,
            r#""doc_id":"d""#,
            r#""timestamp":5"#,
            r#""action":"View""#,
            r#""dwell_ms":2"#,
            r#""position":4"#,
            r#""event_id":"e""#,
        ];
        let expected = decode_native_tree(format!("{{{}}}", pairs.join(",")).as_bytes(), 1 << 20);
        assert!(matches!(expected, Ok(Event::Click(_))));
        // a rotation and a reversal of each rotation: 16 orders, each key first once
        for start in 0..pairs.len() {
            let mut order: Vec<&str> = pairs[start..]
                .iter()
                .chain(&pairs[..start])
                .copied()
                .collect();
            for _ in 0..2 {
                let raw = format!("{{{}}}", order.join(","));
                assert_eq!(
                    decode_fast(raw.as_bytes()).map(Ok),
                    Some(expected.clone()),
                    "{raw}"
                );
                order.reverse();
            }
        }
    }

    /// Mutations of full records (each key dropped, each value replaced by each of a set of
    /// values of other types and ranges, each key doubled): whenever the fast path answers, it
    /// answers what the tree path does, and `decode_native` always answers as the tree path.
    #[test]
    fn mutations_agree_with_tree_path() {
        let records: [&[(&str, &str)]; 3] = [
            &[
                ("type", r#""impression""#),
                ("request_id", r#""r""#),
                ("timestamp", "5"),
                ("results", r#"["a",{"doc_id":"b","score":1.5,"team":"B"}]"#),
                ("query", r#""Red Shoes""#),
                ("query_id", r#""q""#),
                ("labels", r#"{"arm":"t"}"#),
                ("event_id", r#""e""#),
            ],
            &[
                ("type", r#""click""#),
                ("request_id", r#""r""#),
                ("doc_id", r#""d""#),
                ("timestamp", r#""2026-01-01T00:00:00Z""#),
                ("action", r#""View""#),
                ("dwell_ms", "2.5"),
                ("position", "4"),
                ("event_id", r#""e""#),
            ],
            &[
                ("type", r#""judgment""#),
                ("query_id", r#""q""#),
                ("query", r#""Blue""#),
                ("doc_id", r#""d""#),
                ("grade", "2"),
                ("timestamp", "1.5e3"),
                ("judge", r#""j""#),
                ("event_id", r#""e""#),
            ],
        ];
        let values = [
            "null",
            "true",
            "0",
            "-1",
            "1",
            "2.0",
            "1e3",
            "-0.5",
            "1e400",
            "NaN",
            "99999999999999999999",
            "1000000",
            "1000001",
            "\"\"",
            "\"x\"",
            "\"  \"",
            "\"\\u00e9\\n\"",
            "\"1767225600000\"",
            "[]",
            "[\"a\"]",
            "{}",
            "{\"k\":\"v\"}",
            "[{\"id\":\"a\"}]",
            "[{\"doc_id\":\"a\",\"score\":\"2\"}]",
            "\"impression\"",
            "\"click\"",
            "\"judgment\"",
        ];
        let render = |fields: &[(&str, String)]| -> String {
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", body.join(","))
        };
        let mut taken = 0;
        let mut total = 0;
        for record in records {
            let base: Vec<(&str, String)> =
                record.iter().map(|(k, v)| (*k, v.to_string())).collect();
            let mut variants = vec![render(&base)];
            for i in 0..base.len() {
                let mut dropped = base.clone();
                dropped.remove(i);
                variants.push(render(&dropped));
                let mut doubled = base.clone();
                doubled.push(base[i].clone());
                variants.push(render(&doubled));
                for value in values {
                    let mut changed = base.clone();
                    changed[i].1 = value.to_string();
                    variants.push(render(&changed));
                }
            }
            for raw in &variants {
                let tree = decode_native_tree(raw.as_bytes(), usize::MAX);
                if let Some(event) = decode_fast(raw.as_bytes()) {
                    taken += 1;
                    assert_eq!(Ok(event), tree, "{raw}");
                }
                assert_eq!(
                    crate::decode::decode_native(raw.as_bytes(), usize::MAX),
                    tree,
                    "{raw}"
                );
                total += 1;
            }
        }
        // the fast path took a good share of them, and left the rest (a doubled key always)
        assert!(taken > 100 && taken < total - 24, "{taken} of {total}");
    }
}
