#pragma once
#include <atomic>
#include <string>
#include <thread>
#include <vector>

// Which parts of the pattern run: all of it, only the launch callback's layout queries, or only the
// threads that pause kernel records and flush (records on, no callback).
enum class OldPatternParts { all = 1, callback_only = 2, records_only = 3 };

// Subscribes this program to CUPTI with the callback pattern deepum used before its lock
// discipline and starts the threads that pause records and flush, until `stop`; they are added to
// `threads`. Returns an error message, or empty when started.
std::string start_old_callback_pattern(OldPatternParts parts, const std::atomic<bool>& stop,
                                       std::vector<std::thread>& threads);
