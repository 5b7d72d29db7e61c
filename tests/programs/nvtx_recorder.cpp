// A stand-in for an NVTX tool such as Nsight Systems: loaded by an NVTX instance through
// NVTX_INJECTION64_PATH, it writes down the domains created and the ranges pushed and popped (by
// registered name), for move_ranges_check to read back through nvtx_recorder_log().
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::mutex g_mutex;
std::string g_log;
std::vector<std::string> g_strings;  // registered strings; a handle is its index + 1

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  std::lock_guard lock(g_mutex);
  g_log += std::string("domain ") + name + "\n";
  return reinterpret_cast<nvtxDomainHandle_t>(std::uintptr_t{1});
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* text) {
  std::lock_guard lock(g_mutex);
  g_strings.emplace_back(text);
  return reinterpret_cast<nvtxStringHandle_t>(static_cast<std::uintptr_t>(g_strings.size()));
}

int NVTX_API push(nvtxDomainHandle_t, const nvtxEventAttributes_t* attributes) {
  std::lock_guard lock(g_mutex);
  const auto handle = reinterpret_cast<std::uintptr_t>(attributes->message.registered);
  const bool known =
      attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED && handle >= 1 && handle <= g_strings.size();
  g_log += "push " + (known ? g_strings[handle - 1] : std::string("?")) + "\n";
  return 0;
}

int NVTX_API pop(nvtxDomainHandle_t) {
  std::lock_guard lock(g_mutex);
  g_log += "pop\n";
  return 0;
}

template <typename Function>
bool attach(NvtxFunctionTable table, unsigned size, NvtxCallbackIdCore2 id, Function function) {
  if (static_cast<unsigned>(id) >= size || table[id] == nullptr) return false;
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (callbacks == nullptr || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size))
    return 0;
  return attach(table, size, NVTX_CBID_CORE2_DomainCreateA, domain_create) &&
         attach(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, register_string) &&
         attach(table, size, NVTX_CBID_CORE2_DomainRangePushEx, push) &&
         attach(table, size, NVTX_CBID_CORE2_DomainRangePop, pop);
}

extern "C" __attribute__((visibility("default"))) const char* nvtx_recorder_log() {
  std::lock_guard lock(g_mutex);
  return g_log.c_str();
}
