"""kernels-beside-copies.py TRACE.json: whether the program's kernels run slower beside the eviction
thread's copies (tracks 11-13, in its own context) or deepum's copies back (tracks 14 and 15): per
kernel name (20 us or longer), the median duration alone (no copy at all during it), with copies
out over half of it, and with copies back over half of it."""
import bisect
import collections
import json
import statistics
import sys

ev = json.load(open(sys.argv[1]))["traceEvents"]
gpu=[e for e in ev if e.get('pid')==1 and e.get('ph')=='X']
kern=[e for e in gpu if e['tid']==10 and not e['name'].startswith('mem')]
def spans(tids,kind=None):
    xs=sorted((e['ts'],e['ts']+e['dur']) for e in gpu if e['tid'] in tids and (kind is None or kind in e['name']))
    out=[]
    for s,t in xs:
        if out and s<=out[-1][1]: out[-1][1]=max(out[-1][1],t)
        else: out.append([s,t])
    return out
def frac(spans_, s, t):
    i=bisect.bisect_left([x[1] for x in spans_], s)
    cov=0
    while i<len(spans_) and spans_[i][0]<t:
        cov+=max(0,min(t,spans_[i][1])-max(s,spans_[i][0])); i+=1
    return cov/(t-s) if t>s else 0
out=spans({11,12,13})
dd=spans({11})
back=spans({14,15})
by=collections.defaultdict(lambda: {'alone':[], 'out':[], 'back':[]})
ends=[x[1] for x in out]
for k in kern:
    s,t=k['ts'],k['ts']+k['dur']
    if k['dur']<20: continue
    fo=frac(out,s,t); fb=frac(back,s,t)
    key='out' if fo>0.5 else ('back' if fb>0.5 else ('alone' if fo==0 and fb==0 else None))
    if key: by[k['name']][key].append(k['dur'])
rows=[]
for n,d in by.items():
    if len(d['alone'])>=5 and len(d['out'])>=5:
        a=statistics.median(d['alone']); o=statistics.median(d['out'])
        b=statistics.median(d['back']) if len(d['back'])>=5 else float('nan')
        rows.append((sum(d['alone'])+sum(d['out']), n[:70], len(d['alone']), a, len(d['out']), o, o/a, len(d['back']), b/a))
rows.sort(reverse=True)
print(f"{'kernel':70s} {'n alone':>7s} {'med us':>8s} {'n beside out':>12s} {'med us':>8s} {'ratio':>6s} {'n beside back':>13s} {'ratio':>6s}")
for r in rows[:25]:
    print(f"{r[1]:70s} {r[2]:7d} {r[3]:8.0f} {r[4]:12d} {r[5]:8.0f} {r[6]:6.2f} {r[7]:13d} {r[8]:6.2f}")
