// The one table of configuration keys. Add a key by adding a row (and its member to Config); a key
// in a section is named "section.key" and reached with field<&Config::section, &Section::key>().
#include "deepum/config/keys.hpp"

#include <array>

namespace deepum::config {
namespace {

// constexpr so the table is ready before any static constructor of the preloaded library runs.
constexpr std::array kKeys{
    KeySpec{"enabled", "true", "Set to false to pass every CUDA call through untouched.",
            field<&Config::enabled>()},
    KeySpec{
        "alloc_limit", "100%",
        "Most memory the application may have allocated at once; as Unified Memory it may exceed the GPU's.",
        field<&Config::alloc_limit>()},
    KeySpec{"resident_limit", "100%", "Most of that memory kept resident in GPU memory at once.",
            field<&Config::resident_limit>()},
    KeySpec{"eviction_headroom", "1GiB",
            "Free room deepum keeps under resident_limit, for demand faults and new allocations: at least a "
            "tenth of the limit, at most a quarter; reactive eviction widens it when residency overshoots.",
            field<&Config::eviction_headroom>()},
    KeySpec{"stream_ordered_eviction", "true",
            "Hold resident_limit by evictions ordered in the program's streams before the launches that "
            "need the room, counting as resident every 2 MB block a launch names (its pointer arguments, "
            "to the end of each tensor); false evicts from CUPTI's records alone, which arrive 0.1-2 s late.",
            field<&Config::stream_ordered_eviction>()},
    KeySpec{"stream_ordered_prefetch", "false",
            "With stream_ordered_eviction: also prefetch the blocks each launch (or copy) names to the GPU "
            "in bulk, on deepum's stream after the evictions that make room, as the launch is enqueued, "
            "and make the launch wait for them instead of faulting them in.",
            field<&Config::stream_ordered_prefetch>()},
    KeySpec{
        "stream_ordered_discard", "false",
        "With stream_ordered_eviction: victims PyTorch's caching allocator holds in its cache (whole 2 MB "
        "blocks of freed tensors, not handed out again) are discarded instead of written back, after the "
        "work so far in the stream they were freed on; the launch waits for the discard.",
        field<&Config::stream_ordered_discard>()},
    KeySpec{"stream_ordered_place_fresh", "false",
            "With stream_ordered_eviction: a fresh block (a whole 2 MB block of memory just allocated, or "
            "handed out again by PyTorch's caching allocator, that no launch has named since) is made "
            "resident without copying its stale contents, when the first launch naming it finds it "
            "evicted. Sound only if every write reaches the memory by a launch, copy or memset that names "
            "it: a write deepum cannot see (a pointer kept in device memory) would be lost. Launches whose "
            "pointers deepum cannot all see, graphs and 2-D/3-D copies end every block's freshness. "
            "With stream_ordered_discard, dead victims are then dropped where they are, not placed on the "
            "host (nearly every way back being a placement).",
            field<&Config::stream_ordered_place_fresh>()},
    KeySpec{"stream_ordered_swap", "false",
            "With stream_ordered_eviction: live victims (whole 2 MB blocks) are copied to a pinned host "
            "store of deepum's and dropped on the GPU instead of migrated to the host by the driver; a "
            "launch or copy naming a swapped block has it placed and copied back before it; an operation "
            "that may reach memory it does not name (a pointer list past what deepum keeps, an unknown "
            "parameter layout, a graph, an undecoded copy) first has every swapped block copied back into "
            "managed memory on the host. Needs the driver's cuMemDiscardBatchAsync and "
            "cuMemDiscardAndPrefetchBatchAsync.",
            field<&Config::stream_ordered_swap>()},
    KeySpec{"swap_store_limit", "0",
            "Pinned host bytes deepum may hold for blocks stream_ordered_swap swaps out; past it victims "
            "are migrated by the driver as without swap. 0 is automatic: alloc_limit less resident_limit, "
            "and at most half of the host's physical memory either way. A percentage is of the GPU's "
            "memory, as for the limits.",
            field<&Config::swap_store_limit>(), std::nullopt, "automatic"},
    KeySpec{"stream_ordered_eviction_thread", "true",
            "With stream_ordered_eviction: evictions are issued from a thread of deepum's, in a CUDA "
            "context of its own (which takes some GPU memory), not from the program's thread, which the "
            "driver holds for the whole move when nothing is queued ahead of it (about 70 ms per GiB on "
            "an H100), and whose other calls in the same context it holds up meanwhile. The first "
            "operation that needs one's room waits on the host until it is issued.",
            field<&Config::stream_ordered_eviction_thread>()},
    KeySpec{"stream_ordered_evictions_ahead", "1",
            "With stream_ordered_eviction: evictions alongside the program at most in flight at once. "
            "Another starts once the room left under resident_limit (theirs counted free) is under this "
            "many batches, so the next eviction is queued before a launch needs its room; a batch is "
            "eviction_headroom, at most an eighth of the limit.",
            field<&Config::stream_ordered_evictions_ahead>(), IntegerRange{1, 4}},
    KeySpec{"learn_loop", "true",
            "Learn the loop the program repeats from its launches and plan with it: evictions take what "
            "the loop names furthest ahead (where it repeats its addresses), and swapped blocks the next "
            "launches name are copied back while earlier ones run. false, or before a loop is learned: "
            "victims are the least recently named (in a loop, what comes back next), copied back at the "
            "launch naming them.",
            field<&Config::learn_loop>()},
    KeySpec{
        "remote_access", "off",
        "While resident_limit is enforced, how the GPU reaches memory that is not resident: off faults it "
        "in; "
        "mapped reads and writes it over the link where it lies (preferred location host, mapped for the "
        "GPU), "
        "so residency grows only by deepum's prefetches; on_fault is mapped, but the first touch after each "
        "eviction faults once, which tells the prefetcher what kernels use. Needs prefetch.enabled: nothing "
        "else moves memory to the GPU.",
        field<&Config::remote_access>()},
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
    KeySpec{"log_level", "info", "Least severe message logged: trace, debug, info, warn, error or off.",
            field<&Config::log_level>()},
    KeySpec{"log_file", "", "File the log is appended to; %p becomes the process id. Empty logs to stderr.",
            field<&Config::log_file>()},
    KeySpec{"stats_file", "",
            "File the JSON statistics are written to at exit (docs/stats-format.md); %p becomes the process "
            "id. Empty writes none.",
            field<&Config::stats_file>()},
    KeySpec{"summary", "true", "Print a short summary, ending in a verdict, to the log at exit.",
            field<&Config::summary>()},
    KeySpec{"prefetch.enabled", "false",
            "Prefetch, pre-evict and plan ahead with the correlation prefetcher while resident_limit is "
            "enforced; false leaves reactive eviction only. Off by default: not yet faster than reactive "
            "eviction (docs/benchmarks.md).",
            field<&Config::prefetch, &PrefetchConfig::enabled>()},
    KeySpec{"prefetch.lookahead", "512",
            "Kernels the prefetcher plans ahead (its starting value when adaptive).",
            field<&Config::prefetch, &PrefetchConfig::lookahead>(), IntegerRange{1, 4096}},
    KeySpec{"prefetch.adaptive_lookahead", "false",
            "Look further ahead when prefetches arrive late, less far when they are evicted unused (8 up to "
            "the larger of 256 and lookahead).",
            field<&Config::prefetch, &PrefetchConfig::adaptive_lookahead>()},
    KeySpec{"prefetch.pre_evict", "true",
            "Evict ahead of the prefetches to keep eviction_headroom free; false leaves eviction to the "
            "reactive safety net.",
            field<&Config::prefetch, &PrefetchConfig::pre_evict>()},
    KeySpec{"prefetch.discard", "false",
            "Discard memory PyTorch's caching allocator takes back into its cache (PyTorch 2.10-2.11), so "
            "it is never written back; ordered on the block's stream. Experimental: it slows GPT-2 down.",
            field<&Config::prefetch, &PrefetchConfig::discard>()},
    KeySpec{"prefetch.history", "3", "Kernels of history that key the next-kernel prediction.",
            field<&Config::prefetch, &PrefetchConfig::history>(), IntegerRange{1, 8}},
    KeySpec{"prefetch.rows", "2048", "Sets in each kernel's block correlation table.",
            field<&Config::prefetch, &PrefetchConfig::rows>(), IntegerRange{1, 1u << 20}},
    KeySpec{"prefetch.ways", "2", "Rows per set of a block correlation table.",
            field<&Config::prefetch, &PrefetchConfig::ways>(), IntegerRange{1, 64}},
    KeySpec{"prefetch.successors", "4", "Successor blocks kept per row, most recently seen first.",
            field<&Config::prefetch, &PrefetchConfig::successors>(), IntegerRange{1, 64}},
};

}  // namespace

std::span<const KeySpec> config_keys() { return kKeys; }

}  // namespace deepum::config
