// The decisions of mode fast for tests/programs/sweep's pattern (16 arrays of 256 MiB, 2x: limit 2 GiB),
// replayed through the model without a GPU: per step and array i, update(a_i, a_i+1), partial_sums(a_i,
// sums), a copy of sums to the host. Prints the bytes swapped in and out per step; with a second
// argument, steps 5-7's moves by array. Built against a build folder B of this tree:
//   g++ -std=c++20 -O1 -Icore/include -IB/core sweep_replay.cpp B/core/libdeepum_core.a -o sweep_replay
//   sweep_replay 1 [v]    # the first argument: evictions_ahead
#include <cstdio>
#include <string>
#include <cstdlib>
#include "deepum/core/launch_ordered_residency.hpp"
using namespace deepum::core;
static std::string ids(const std::vector<AddressRange>& v){std::string r;for(auto&x:v){r+=std::to_string((x.address-(1ull<<40))>>32)+",";}return r;}
static std::uint64_t tot(const std::vector<AddressRange>& v){std::uint64_t t=0;for(auto&r:v)t+=r.bytes;return t;}
int main(int argc,char**argv){
  int K=16; std::uint64_t M=256ull<<20; int steps=8; unsigned ahead=argc>1?atoi(argv[1]):1; bool verbose=argc>2;
  std::uint64_t limit=(K*M)/2, batch=std::min<std::uint64_t>(1ull<<30, limit/8);
  LaunchOrderedOptions o; o.prefetch=true;o.discard_dead=true;o.place_fresh=true;o.swap=true;o.swap_bytes=34ull<<30;o.evictions_ahead=ahead;
  LaunchOrderedResidency m(limit,batch,o);
  std::uint64_t base=1ull<<40; std::vector<std::uint64_t> a;
  for(int i=0;i<K;i++){a.push_back(base+i*(1ull<<32)); m.on_range_allocated(a.back(),M); m.on_buffer_handed_out(a.back(),M);}
  std::uint64_t s=base+K*(1ull<<32); m.on_range_allocated(s,8192); m.on_buffer_handed_out(s,8192);
  std::uint64_t fn=1;
  for(int st=0;st<steps;st++){
    std::uint64_t in=0,out=0,waits=0;
    for(int i=0;i<K;i++){
      for(int op=0;op<3;op++){
        LaunchEviction d;
        if(op<2){KernelLaunch l; l.function=op+1; l.stream=7; l.pointer_count=2;
          l.pointers[0]=a[i]; l.extents[0]=M; l.pointers[1]= op==0? a[(i+1)%K]: s; l.extents[1]= op==0? M: 8192;
          std::uint64_t key=op*1000003+ a[i]*31 + l.pointers[1]; l.execution_key=key; l.correlation_id=fn++;
          d=m.before_launch(l);}
        else {CopyLaunch c; c.stream=7; c.operand_count=1; c.operands[0]=s; c.bytes=8192; c.correlation_id=fn++; d=m.before_copy(c);}
        in+=tot(d.restore)+tot(d.restore_ahead)+tot(d.fetch); out+=tot(d.swap_out)+tot(d.evict);
        if(d.wait_for_evict||d.wait_for_eviction) waits++;
        if(verbose && st>=5 && (tot(d.restore)+tot(d.restore_ahead)+tot(d.swap_out)+tot(d.evict)+d.wait_for_eviction)) std::printf("  out[%s] ahead[%s] restore[%s]\n",ids(d.swap_out).c_str(),ids(d.restore_ahead).c_str(),ids(d.restore).c_str()),std::printf("  st%d i%2d op%d: swap_out %4lluM evict %lluM restore %4lluM ahead %4lluM | ev#%llu wfe %llu wait_evict %d aae %llu ap %llu pl#%llu ahead#%llu\n",st,i,op,
          (unsigned long long)tot(d.swap_out)>>20,(unsigned long long)tot(d.evict)>>20,(unsigned long long)tot(d.restore)>>20,(unsigned long long)tot(d.restore_ahead)>>20,
          (unsigned long long)d.eviction_number,(unsigned long long)d.wait_for_eviction,d.wait_for_evict,(unsigned long long)d.ahead_after_eviction,(unsigned long long)d.after_placement,(unsigned long long)d.placement_number,(unsigned long long)d.ahead_placement_number);
      }
    }
    std::printf("step %d: in %llu MiB out %llu MiB, waited decisions %llu, period %llu\n",st,(unsigned long long)in>>20,(unsigned long long)out>>20,(unsigned long long)waits,(unsigned long long)m.stats().loop_period);
  }
}
