//! A command's `--json` output is parsed element by element as it arrives
//! (`ChunkedArray`), with `from_utf8_unchecked` over what was validated so
//! far. Whatever the bytes and however they are split, it must never panic,
//! must keep every byte, and must either give up or yield exactly the
//! elements that parsing the whole output gives. Read again building only
//! some properties of each object (`Projection`), it must accept exactly
//! the same outputs and yield the same elements without the others.
#![no_main]

use std::io::Read;

use clawdis_engine::fuzzing::{ChunkedArray, json_items};
use clawdis_engine::value::{Projection, Value};
use libfuzzer_sys::fuzz_target;

/// Hands out `data` in pieces of the given sizes, with an empty read (the
/// end of one read for `ChunkedArray`) after each piece.
struct Pieces {
    data: Vec<u8>,
    sizes: Vec<usize>,
    pos: usize,
    piece: usize,
    paused: bool,
}

impl Read for Pieces {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.paused {
            self.paused = false;
            return Ok(0);
        }
        let size = self.sizes.get(self.piece % self.sizes.len().max(1)).copied().unwrap_or(1).max(1);
        let n = size.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        self.piece += 1;
        self.paused = n > 0;
        Ok(n)
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&split, rest)) = input.split_first() else { return };
    // The first byte picks four piece sizes (1, 3, 5 or 7 bytes), cycling.
    let sizes: Vec<usize> = (0..4).map(|i| 1 + usize::from((split >> (2 * i)) & 3) * 2).collect();
    let reader = Pieces { data: rest.to_vec(), sizes, pos: 0, piece: 0, paused: false };
    let mut array = ChunkedArray::new(Box::new(reader));
    let mut items = Vec::new();
    while let Some(v) = array.next_element::<Value>() {
        items.push(v);
    }
    let clean = array.finish();
    let bytes = array.into_bytes();
    assert_eq!(bytes, rest, "every byte is kept");
    if clean {
        let whole = json_items(String::from_utf8_lossy(rest).into_owned())
            .expect("a strict array is valid JSON")
            .collect()
            .expect("its elements parse");
        assert_eq!(items, whole);
    }

    // Read again, in other pieces, building only two properties of
    // top-level objects: the elements must be the full ones without the
    // other properties, and the output must be accepted exactly when it is
    // accepted in full.
    let keep = ["a".to_string(), "0".to_string()];
    let reader = Pieces { data: rest.to_vec(), sizes: vec![3, 1, 7], pos: 0, piece: 0, paused: false };
    let mut array = ChunkedArray::new(Box::new(reader));
    let mut projected = Vec::new();
    while let Some(v) = array.next_element_seed(&Projection { keep: &keep }) {
        projected.push(v);
    }
    let projected_clean = array.finish();
    let expected: Vec<Value> = items
        .iter()
        .map(|item| match item {
            Value::Object(obj) => {
                let mut obj = obj.clone();
                let drop: Vec<String> = obj.keys().filter(|k| !keep.iter().any(|kept| kept == k)).map(str::to_string).collect();
                for k in drop {
                    obj.remove(&k);
                }
                Value::Object(obj)
            }
            other => other.clone(),
        })
        .collect();
    assert_eq!(projected_clean, clean, "projection accepts exactly what a full read accepts");
    if clean {
        assert_eq!(projected, expected);
    }
    for (p, e) in projected.iter().zip(&expected) {
        assert_eq!(p, e);
    }
});
