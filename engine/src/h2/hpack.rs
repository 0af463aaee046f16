//! The structure of an HPACK header block (RFC 7541 §6), checked before it is decoded: every
//! representation's integers and strings whole within the block. httlib-hpack, which decodes
//! the engine's replies fast, indexes past the end of a block cut inside an integer or a string
//! (a panic); a block that fails this check is a protocol error instead.

/// Most bytes of an HPACK integer httlib-hpack accepts (its own limit).
const MAX_INT_BYTES: usize = 5;

/// An integer with an `n`-bit prefix at `b[at..]`: its value and the offset after it.
fn int(b: &[u8], at: usize, n: u32) -> Option<(u64, usize)> {
    let max = (1u64 << n) - 1;
    let v = u64::from(*b.get(at)?) & max;
    if v < max {
        return Some((v, at + 1));
    }
    let (mut v, mut shift) = (v, 0);
    for i in 1..MAX_INT_BYTES {
        let byte = *b.get(at + i)?;
        v += u64::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Some((v, at + i + 1));
        }
    }
    None
}

/// A string literal at `b[at..]` (length with a 7-bit prefix, then its bytes): the offset after.
fn string(b: &[u8], at: usize) -> Option<usize> {
    let (len, at) = int(b, at, 7)?;
    let end = at.checked_add(usize::try_from(len).ok()?)?;
    (end <= b.len()).then_some(end)
}

/// Every representation of `block` is whole: indexed fields, literals (with their name when it
/// is not indexed, and their value) and dynamic table size updates.
pub fn well_formed(block: &[u8]) -> bool {
    let mut at = 0;
    while at < block.len() {
        let first = block[at];
        let next = if first & 0x80 != 0 {
            int(block, at, 7).map(|(_, at)| at)
        } else if first & 0xe0 == 0x20 {
            int(block, at, 5).map(|(_, at)| at)
        } else {
            // Literal with incremental indexing (6-bit index), or without indexing / never
            // indexed (4-bit index); index 0: the name follows as a string.
            let bits = if first & 0x40 != 0 { 6 } else { 4 };
            int(block, at, bits).and_then(|(index, at)| {
                let at = if index == 0 { string(block, at)? } else { at };
                string(block, at)
            })
        };
        match next {
            Some(n) => at = n,
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::well_formed;

    #[test]
    fn whole_blocks_pass_and_every_cut_inside_a_representation_fails() {
        // :status 200 indexed; a literal with an indexed name (content-type) and a long value;
        // a literal with a literal name; a table size update of 4,096 (a 3-byte integer).
        let mut block = vec![0x88, 0x0f, 0x10, 10];
        block.extend_from_slice(b"text/plain");
        block.extend_from_slice(&[0x00, 3]);
        block.extend_from_slice(b"x-a");
        block.extend_from_slice(&[0x7f, 0x81, 0x01]); // a 256-byte value: 127 + 1 + 128
        block.extend_from_slice(&[b'v'; 256]);
        block.extend_from_slice(&[0x3f, 0xe1, 0x1f]);
        assert!(well_formed(&block));
        assert!(well_formed(&[]));
        let ends = [1, 14, 278];
        for cut in 1..block.len() {
            assert_eq!(
                well_formed(&block[..cut]),
                ends.contains(&cut),
                "cut at {cut}"
            );
        }
        // An integer over 5 bytes is refused, as httlib-hpack refuses it.
        assert!(!well_formed(&[0xff, 0x80, 0x80, 0x80, 0x80, 0x01]));
    }
}
