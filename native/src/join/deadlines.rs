//! The open lists in deadline order, `(impression time, arrival)`, as the heap of
//! `(ts, seq, request_id)` of `Joiner._deadlines`: here a binary heap of slot numbers (4 bytes
//! an entry, not 24), ordered through a key the caller reads from the slot.

#[derive(Debug, Clone, Default)]
pub struct Deadlines {
    heap: Vec<u32>,
}

impl Deadlines {
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.heap.capacity()
    }

    pub fn peek(&self) -> Option<u32> {
        self.heap.first().copied()
    }

    pub fn push<K: Ord>(&mut self, slot: u32, key: impl Fn(u32) -> K) {
        self.heap.push(slot);
        let mut i = self.heap.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if key(self.heap[i]) >= key(self.heap[parent]) {
                break;
            }
            self.heap.swap(i, parent);
            i = parent;
        }
    }

    pub fn pop<K: Ord>(&mut self, key: impl Fn(u32) -> K) -> Option<u32> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.heap[0], last);
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < n && key(self.heap[l]) < key(self.heap[least]) {
                least = l;
            }
            if r < n && key(self.heap[r]) < key(self.heap[least]) {
                least = r;
            }
            if least == i {
                return Some(top);
            }
            self.heap.swap(i, least);
            i = least;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_whatever_the_push_order() {
        let keys: Vec<(i64, u64)> = vec![(5, 1), (3, 2), (5, 0), (1, 9), (3, 1), (8, 8), (0, 3)];
        for rotate in 0..keys.len() {
            let mut order: Vec<u32> = (0..keys.len() as u32).collect();
            order.rotate_left(rotate);
            let mut h = Deadlines::default();
            let key = |s: u32| keys[s as usize];
            for &s in &order {
                h.push(s, key);
            }
            let mut popped = vec![];
            while let Some(s) = h.pop(key) {
                popped.push(keys[s as usize]);
            }
            let mut want = keys.clone();
            want.sort();
            assert_eq!(popped, want);
        }
    }
}
