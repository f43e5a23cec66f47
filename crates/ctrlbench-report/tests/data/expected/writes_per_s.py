#!/usr/bin/env python3
# Run from crates/ctrlbench-report/tests/data: prints the writes/s values the
# tests expect, computed without the code under test.
# Independent computation of "controller writes/s (own client)":
# delta of rest_writes_total between the first and last good rows, over the
# span from the last good row before the first increase to the first good row
# showing the final count (timestamps as written).
import csv, datetime, sys, statistics
def ts(s): return datetime.datetime.fromisoformat(s.replace('Z','+00:00')).timestamp()
def wps(path):
    rows=[r for r in csv.DictReader(open(path)) if r['scrape_ok']=='1']
    v=[float(r['rest_writes_total']) for r in rows]; t=[ts(r['timestamp']) for r in rows]
    base,last=v[0],v[-1]
    if last-base<=0: return 0.0
    k=next(i for i,x in enumerate(v) if x>base)
    j=next(i for i,x in enumerate(v) if x==last)
    return (last-base)/(t[j]-t[max(k-1,0)])
out={}
for d in ['results-small','results-small-b']:
    for var in ['rust-good','rust-bad-fix']:
        for rep in ['rep1','rep2']:
            p=f'{d}/N20/{var}/{rep}/metrics-{var}.csv'
            try: out[(d,var,rep)]=wps(p)
            except FileNotFoundError: pass
for k,v in out.items(): print(k, round(v,6))
for var in ['rust-good','rust-bad-fix']:
    a=statistics.median([out[('results-small',var,r)] for r in ['rep1','rep2']])
    b=out[('results-small-b',var,'rep1')]
    print(var,'ratio', round(b/a,2), 'A median', round(a,1))
