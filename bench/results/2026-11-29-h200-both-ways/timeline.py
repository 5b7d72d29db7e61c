#!/usr/bin/env python3
"""timeline.py TRACE.perfetto.json[.xz] LAST_MS: every track of the last LAST_MS of a deepum trace in
time order, one line per burst (operations of one track and kind less than 0.03 ms apart merged):
start ms, track (a GPU stream's id, 2 and 3 the driver's migrations; h1 the program's launches, h2
deepum's moves as issued), length ms, how many, MB, name."""
import json
import sys
d=json.load(open(sys.argv[1]) if not sys.argv[1].endswith('.xz') else __import__('lzma').open(sys.argv[1]))
ev=d['traceEvents']
X=[e for e in ev if e.get('ph')=='X' and e['pid']==1]
I=[e for e in ev if e.get('ph')=='i']
end=max(e['ts']+e['dur'] for e in X)
span=float(sys.argv[2]); t0=end-span*1000
rows=[]
for tid in sorted(set(e['tid'] for e in X)):
  es=sorted([e for e in X if e['tid']==tid and e['ts']>t0],key=lambda e:e['ts'])
  cur=None
  for e in es:
    s,f=e['ts'],e['ts']+e['dur']
    b=e['args'].get('bytes',0) if isinstance(e.get('args'),dict) else 0
    nm=e['name'][:30]
    if cur and s-cur[1]<30 and nm[:12]==cur[4][:12]:
      cur[1]=max(cur[1],f);cur[2]+=1;cur[3]+=b
    else:
      if cur: rows.append((cur[0],str(tid),cur[1],cur[2],cur[3],cur[4]))
      cur=[s,f,1,b,nm]
  if cur: rows.append((cur[0],str(tid),cur[1],cur[2],cur[3],cur[4]))
for e in I:
  if e['ts']>t0 and e['tid']in(1,2): rows.append((e['ts'],'h'+str(e['tid']),e['ts'],1,e['args'].get('bytes',0),e['name'][:30]))
rows.sort()
for r in rows: print('%9.2f %-4s %7.2f n=%3d MB=%7.1f %s'%((r[0]-t0)/1000,r[1],(r[2]-r[0])/1000,r[3],r[4]/2**20,r[5]))
