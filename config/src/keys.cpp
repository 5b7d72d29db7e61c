// The one table of configuration keys. Add a key by adding a row (and its member to Config); a key
// in a section is named "section.key" and reached with field<&Config::section, &Section::key>().
#include "deepum/config/keys.hpp"

#include <array>

namespace deepum::config {
namespace {

// Why the correlation prefetcher's keys are no longer read.
constexpr std::string_view kPrefetcherGone = "the correlation prefetcher's moves are the engine's (mode)";
constexpr std::string_view kTunedPrefetcher =
    "it tuned the correlation prefetcher, whose moves are the engine's (mode)";

// constexpr so the table is ready before any static constructor of the preloaded library runs.
constexpr std::array kKeys{
    KeySpec{"enabled", "true", "Set to false to pass every CUDA call through untouched.",
            field<&Config::enabled>()},
    KeySpec{
        "alloc_limit", "100%",
        "Most memory the application may have allocated at once; as Unified Memory it may exceed the GPU's.",
        field<&Config::alloc_limit>()},
    KeySpec{"resident_limit", "0",
            "Most of that memory kept resident in GPU memory at once. 0 is automatic: where alloc_limit "
            "exceeds the GPU's memory, the GPU's free memory at start less a margin (a sixteenth of the "
            "GPU's memory, at least 1 GiB, at most half of what is free); otherwise the whole GPU, and "
            "deepum holds no limit.",
            field<&Config::resident_limit>(), std::nullopt, "automatic"},
    KeySpec{"mode", "fast",
            "How memory moves while deepum holds a resident limit (one below the GPU's memory): fast makes "
            "every move (evictions, prefetches, discards, placement of fresh blocks, swaps) and assumes "
            "kernels reach memory only through their launches' pointer arguments, as PyTorch's do; safe "
            "leaves out placement and swaps, which rely on that; evict only evicts, and the GPU faults the "
            "rest back in; driver holds no limit and lets the driver page memory on faults.",
            field<&Config::mode>()},
    KeySpec{"eviction_headroom", "1GiB",
            "How far below resident_limit an eviction takes residency (a batch): at least a tenth of the "
            "limit, at most an eighth.",
            field<&Config::eviction_headroom>()},
    KeySpec{"swap_store_limit", "0",
            "Pinned host bytes deepum may hold for the blocks it swaps out (mode fast); past it victims "
            "are migrated by the driver as without swaps. 0 is automatic: alloc_limit less resident_limit, "
            "and at most half of the host's physical memory either way. A percentage is of the GPU's "
            "memory, as for the limits.",
            field<&Config::swap_store_limit>(), std::nullopt, "automatic"},
    KeySpec{"evictions_ahead", "1",
            "Evictions alongside the program at most in flight at once. Another starts once the room left "
            "under resident_limit (theirs counted free) is under this many batches, or when copies back "
            "ahead take the room of one in flight, so the next eviction is queued before a launch needs "
            "its room; a batch is eviction_headroom, at most an eighth of the limit.",
            field<&Config::evictions_ahead>(), IntegerRange{1, 4}},
    KeySpec{"learn_loop", "true",
            "Learn the loop the program repeats from its launches and plan with it: evictions take what "
            "the loop names furthest ahead (a loop of addresses, or a PyTorch step whose 2 MB blocks repeat "
            "though its tensors move), and swapped blocks the next launches name are copied back while "
            "earlier ones run. false, or before a loop is learned: "
            "victims are the least recently named (in a loop, what comes back next), copied back at the "
            "launch naming them.",
            field<&Config::learn_loop>()},
    KeySpec{
        "tracing", "full",
        "What deepum watches with CUPTI: full (launches, kernel and copy times, page faults, migrations), "
        "kernels (no faults or migrations), launches (launch callbacks only), off.",
        field<&Config::tracing>()},
    KeySpec{"trace_file", "",
            "Path prefix for a trace of the run: writes PREFIX.dtrace (compact, replayable) and "
            "PREFIX.perfetto.json (open in ui.perfetto.dev); %p becomes the process id. Empty writes none.",
            field<&Config::trace_file>()},
    KeySpec{"cupti_library", "", "Path of libcupti.so to load; empty searches the usual places.",
            field<&Config::cupti_library>()},
    KeySpec{
        "trace_flush_ms", "5",
        "How often CUPTI hands over its activity records, in milliseconds; at most 2 while resident_limit is "
        "enforced.",
        field<&Config::trace_flush_ms>(), IntegerRange{1, 1000}},
    KeySpec{"trace_per_thread_buffers", "true",
            "Give CUPTI one activity buffer per thread instead of shared ones (measured on an H100: no clear "
            "difference in how late records arrive or in what tracing costs).",
            field<&Config::trace_per_thread_buffers>()},
    KeySpec{"worker_interval_us", "1000",
            "How often deepum's worker thread acts on new events, in microseconds; at most 250 while "
            "resident_limit is enforced.",
            field<&Config::worker_interval_us>(), IntegerRange{50, 100000}},
    KeySpec{"log_level", "info",
            "Least severe message logged: trace, debug, info, warn, error or off. trace also logs, for every "
            "operation under a resident limit, the blocks it names and the moves and waits decided for it "
            "(slow: for following what happened to a block).",
            field<&Config::log_level>()},
    KeySpec{"log_file", "", "File the log is appended to; %p becomes the process id. Empty logs to stderr.",
            field<&Config::log_file>()},
    KeySpec{"stats_file", "",
            "File the JSON statistics are written to at exit (docs/stats-format.md); %p becomes the process "
            "id. Empty writes none.",
            field<&Config::stats_file>()},
    KeySpec{"summary", "true", "Print a short summary, ending in a verdict, to the log at exit.",
            field<&Config::summary>()},
    // Deprecated and no longer read: what they steered is gone. Each still loads, with a notice.
    KeySpec{"prefetch.enabled", "false", "The correlation prefetcher, moving memory by its plans.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::enabled>(),
            std::nullopt, "", kPrefetcherGone, true},
    KeySpec{"prefetch.lookahead", "512", "Kernels the correlation prefetcher planned ahead.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::lookahead>(),
            IntegerRange{1, 4096}, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.adaptive_lookahead", "false", "An adaptive lookahead for the correlation prefetcher.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch,
                  &DeprecatedKeys::Prefetch::adaptive_lookahead>(),
            std::nullopt, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.pre_evict", "true", "Evictions ahead of the correlation prefetcher's prefetches.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::pre_evict>(),
            std::nullopt, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.discard", "false", "Discards of every block PyTorch's caching allocator took back.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::discard>(),
            std::nullopt, "", "the engine discards dead victims itself (mode fast and safe)", true},
    KeySpec{"prefetch.history", "3", "Kernels of history keying the correlation prefetcher's prediction.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::history>(),
            IntegerRange{1, 8}, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.rows", "2048", "Sets in each kernel's block correlation table.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::rows>(),
            IntegerRange{1, 1u << 20}, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.ways", "2", "Rows per set of a block correlation table.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::ways>(),
            IntegerRange{1, 64}, "", kTunedPrefetcher, true},
    KeySpec{"prefetch.successors", "4", "Successor blocks kept per row of a block correlation table.",
            field<&Config::deprecated, &DeprecatedKeys::prefetch, &DeprecatedKeys::Prefetch::successors>(),
            IntegerRange{1, 64}, "", kTunedPrefetcher, true},
    KeySpec{"remote_access", "off",
            "The GPU's use of memory that is not resident over the link (off, mapped, on_fault).",
            field<&Config::deprecated, &DeprecatedKeys::remote_access>(), std::nullopt, "",
            "it needed the correlation prefetcher, whose moves are the engine's (mode)", true},
    // Deprecated: each sets one of the moves `mode` sets together (settle_moves in config.cpp). Their
    // defaults are mode fast's moves.
    KeySpec{"stream_ordered_eviction", "true",
            "Evictions ordered before the launches that need the room; false runs as mode evict.",
            field<&Config::deprecated, &DeprecatedKeys::stream_ordered_eviction>(), std::nullopt, "",
            "mode (\"evict\" evicts alone, before launches; false, which evicted from CUPTI's records, now "
            "runs as \"evict\")"},
    KeySpec{"stream_ordered_prefetch", "true", "Prefetch what each launch names before it.",
            field<&Config::moves, &Moves::prefetch>(), std::nullopt, "",
            "mode (\"fast\" and \"safe\" prefetch, \"evict\" does not)"},
    KeySpec{"stream_ordered_discard", "true", "Drop victims PyTorch's caching allocator holds in its cache.",
            field<&Config::moves, &Moves::discard>(), std::nullopt, "",
            "mode (\"fast\" and \"safe\" discard, \"evict\" does not)"},
    KeySpec{"stream_ordered_place_fresh", "true", "Make fresh blocks resident without copying them.",
            field<&Config::moves, &Moves::place_fresh>(), std::nullopt, "",
            "mode (\"fast\" places fresh blocks, \"safe\" does not)"},
    KeySpec{"stream_ordered_swap", "true", "Swap live victims out to a pinned host store of deepum's.",
            field<&Config::moves, &Moves::swap>(), std::nullopt, "",
            "mode (\"fast\" swaps, \"safe\" does not)"},
    KeySpec{"stream_ordered_eviction_thread", "true", "Issue evictions from a thread of deepum's.",
            field<&Config::moves, &Moves::eviction_thread>(), std::nullopt, "",
            "mode (every mode evicts from deepum's thread)"},
    KeySpec{"stream_ordered_evictions_ahead", "1",
            "Evictions alongside the program at most in flight at once.", field<&Config::evictions_ahead>(),
            IntegerRange{1, 4}, "", "evictions_ahead"},
};

}  // namespace

std::span<const KeySpec> config_keys() { return kKeys; }

}  // namespace deepum::config
