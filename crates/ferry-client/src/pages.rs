//! Pagination: follow `nextCursor` until it is missing. An empty string is a valid
//! cursor; a cursor seen twice is a loop and stops with [`Error::CursorLoop`].

use std::collections::HashSet;

use crate::error::{Error, Result};

/// Fetches every page: `fetch(cursor)` returns a page's items and its `nextCursor`.
pub(crate) async fn collect<T, F, Fut>(max_pages: usize, mut fetch: F) -> Result<Vec<T>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>)>>,
{
    let mut seen = HashSet::new();
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..max_pages.max(1) {
        let (page, next) = fetch(cursor.take()).await?;
        items.extend(page);
        match next {
            None => return Ok(items),
            Some(c) => {
                if !seen.insert(c.clone()) {
                    return Err(Error::CursorLoop { cursor: c });
                }
                cursor = Some(c);
            }
        }
    }
    Err(Error::protocol(format!(
        "the list has more than {} pages",
        max_pages.max(1)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(pages: Vec<(Vec<u32>, Option<&'static str>)>, max: usize) -> Result<Vec<u32>> {
        let mut calls = Vec::new();
        collect(max, |cursor| {
            calls.push(cursor.clone());
            let i = calls.len() - 1;
            let page = pages.get(i).cloned();
            async move {
                let (items, next) = page.ok_or_else(|| Error::protocol("no such page"))?;
                Ok((items, next.map(str::to_owned)))
            }
        })
        .await
    }

    #[tokio::test]
    async fn empty_string_is_a_cursor() {
        let r = run(
            vec![(vec![1], Some("")), (vec![2], Some("x")), (vec![3], None)],
            10,
        )
        .await;
        assert_eq!(r.unwrap(), vec![1, 2, 3]);
    }

    #[tokio::test]
    async fn loops_are_caught() {
        let r = run(
            vec![
                (vec![1], Some("a")),
                (vec![2], Some("b")),
                (vec![3], Some("a")),
            ],
            10,
        )
        .await;
        assert!(matches!(r, Err(Error::CursorLoop { cursor }) if cursor == "a"));
    }

    #[tokio::test]
    async fn page_cap() {
        let r = run(vec![(vec![1], Some("a")), (vec![2], Some("b"))], 2).await;
        assert!(matches!(r, Err(Error::Protocol(_))));
    }
}
