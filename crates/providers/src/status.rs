//! HTTP statuses named in a provider's error text, for the drivers' failure classification: a status is
//! a word of its own, never digits inside an address, a port, a version or an id.

/// The HTTP statuses a message names: runs of exactly three digits between 100 and 599 that stand as a
/// word of their own, not part of an address, a port, a version or an id (`127.0.0.1:40429`,
/// `req_0429`, `v1.429` name none).
pub(crate) fn statuses_in(msg: &str) -> Vec<u16> {
    let bytes = msg.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let before = start.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(i).copied();
        let joined = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || b":./_-".contains(&c));
        if i - start == 3
            && !joined(before)
            && !joined(after)
            && let Some(status) = msg[start..i].parse().ok().filter(|s| (100..600).contains(s))
        {
            found.push(status);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::statuses_in;

    #[test]
    fn only_standalone_three_digit_statuses_count() {
        assert_eq!(
            statuses_in("unexpected status 401 Unauthorized, url: http://127.0.0.1:40429/v1, id req_0429"),
            vec![401]
        );
        assert_eq!(statuses_in("API Error: 429 {\"type\":\"error\"}"), vec![429]);
        assert_eq!(
            statuses_in("(503) at 10.0.0.200, version 1.500, id 4290"),
            vec![503]
        );
        assert_eq!(
            statuses_in("no status here: 99 or 600 or 1234"),
            Vec::<u16>::new()
        );
    }
}
