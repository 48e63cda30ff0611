//! L6 the process's allocator policy: when mimalloc (the binary's allocator) hands freed pages
//! back to the OS, and collecting what the pool threads freed. The CLI sets it per command; the
//! library sets no allocator, and without mimalloc these calls do nothing.

/// Hand the memory of a dropped database back (before the cache is built or a report rendered).
/// mimalloc (the binary's allocator) keeps a block freed by another thread than the one that
/// allocated it on that thread's page until that thread allocates again, so the pool threads
/// that read and parsed the files would hold most of it through the census: each of them, and
/// this thread, collects.
pub fn release_freed_memory() {
    rayon::broadcast(|_| collect_this_thread());
    collect_this_thread();
}

/// mimalloc's `mi_option_purge_delay` (the same place in v2's and v3's option lists; the
/// bindings name only the older options). A test checks it reads v3's default.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Hand pages freed by a lint back to the OS after 50 ms instead of mimalloc v3's 1000: a run's
/// parse and check transients are freed in bursts on two threads, and their pages sat unused
/// through the peak. Measured on the bad-input 100k tree: peak RSS 445–466 → 418–427 MiB
/// (`--ignore integrity`), 496–521 → 465–500 MiB (default rules) with 2 ms, for a few tenths of
/// a second more system time; 50 ms keeps most of that (437 → 454 MiB and 474 → 480 MiB against
/// 2 ms, later builds) and refaults fewer pages freed and taken again within a burst (default
/// rules: 314k → 241k faults, 2.91 → 2.50 s; the signed 100k tree, `--ignore integrity`: 124k
/// → 118k, 0.954 → 0.935 s, 444 → 447 MiB). The CLI sets it first thing; a cached replay, which
/// frees little, sets mimalloc's own delay back ([`purge_freed_pages_as_usual`]: it paid about
/// 0.05 s more system time with a short one), and a run that writes the cache sets 2 ms
/// ([`purge_freed_pages_soonest`]).
pub fn purge_freed_pages_sooner() {
    set_purge_delay(50);
}

/// 2 ms, for a run that writes the cache: it holds the rows and findings it caches beside the
/// database at its peak (the bad-input tree, default rules: 490–495 MiB with 2 ms, 501–505 MiB
/// with 50 ms).
pub fn purge_freed_pages_soonest() {
    set_purge_delay(2);
}

/// Never give freed pages back, for a short command (`exec`): the process ends within
/// milliseconds and the OS takes everything back at once; purging at exit was a dozen `madvise`
/// calls after the tool had run.
pub fn never_purge_freed_pages() {
    set_purge_delay(-1);
}

/// mimalloc's own purge delay again (v3: 1000 ms), for a cached replay.
pub fn purge_freed_pages_as_usual() {
    set_purge_delay(1000);
}

fn set_purge_delay(ms: std::os::raw::c_long) {
    // SAFETY: `mi_option_set` takes an option index and a value, no pointer; setting an option
    // at any time is allowed (mimalloc reads it when it next purges).
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

fn collect_this_thread() {
    // SAFETY: `mi_collect` takes no pointer; it frees what the calling thread's own heap no
    // longer uses (and abandoned segments). Without mimalloc as the global allocator (tests,
    // benchmarks) its heaps are empty and it does nothing.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[cfg(test)]
mod allocator_tests {
    #[test]
    fn the_purge_delay_option_index_reads_its_documented_default() {
        // SAFETY: reads an option by index; no pointer is involved.
        let delay = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(
            delay, 1000,
            "mimalloc v3's default `purge_delay` (src/options.c)"
        );
    }
}
