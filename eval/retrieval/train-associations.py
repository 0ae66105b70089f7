#!/usr/bin/env python3
"""Issue #16 item 1: trains domain word associations from developer prose.

Input: the corpus of eval/retrieval/domain-corpus.mjs (one section per line, git-mem index
terms). Method: the V most frequent terms (count >= min-count); symmetric co-occurrence counts
within a window of W terms (weight 1/distance) inside a section; positive PMI with context
distribution smoothing (alpha 0.75); truncated SVD to D dimensions; rows U * S^p, L2-normalised;
quantised to int8 with one float32 scale per row.

Output file (little endian): b"GMWA1\\n", a JSON header line {dim, count, ...}, the terms joined
by "\\n" (header.termsBytes bytes), count float32 scales, count*dim int8 values.

  python3 eval/retrieval/train-associations.py --corpus /tmp/para/corpus.txt --out /tmp/para/assoc.bin \
      [--vocab 40000] [--dim 128] [--window 5] [--min-count 5] [--power 0.5]
Needs numpy and scipy; a few minutes and a few GB of memory for ~10M terms.
"""
import argparse
import json
import sys
import time
from collections import Counter

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds


def write_table(path, magic, head, terms, *arrays):
    """One binary table: a magic line, a JSON header line, the terms, then the arrays' bytes."""
    with open(path, 'wb') as f:
        f.write(magic)
        f.write((json.dumps(head) + '\n').encode('utf8'))
        f.write(terms)
        for arr in arrays:
            f.write(arr.tobytes())

ap = argparse.ArgumentParser()
ap.add_argument('--corpus', default='/tmp/para/corpus.txt')
ap.add_argument('--out', default='/tmp/para/assoc.bin')
ap.add_argument('--vocab', type=int, default=40000)
ap.add_argument('--dim', type=int, default=128)
ap.add_argument('--window', type=int, default=5)
ap.add_argument('--min-count', type=int, default=5)
ap.add_argument('--power', type=float, default=0.5)
ap.add_argument('--alpha', type=float, default=0.75)
ap.add_argument('--source', default='')
ap.add_argument('--table', type=int, default=0, help='also write OUT.tbl: the K strongest PPMI partners per term')
ap.add_argument('--table-min', type=int, default=20, help='partners need this corpus count')
ap.add_argument('--no-svd', action='store_true')
a = ap.parse_args()
t0 = time.time()

lines = open(a.corpus, encoding='utf8').read().split('\n')
cnt = Counter()
for ln in lines:
    cnt.update(ln.split())
vocab = [w for w, c in cnt.most_common(a.vocab) if c >= a.min_count]
V = len(vocab)
ix = {w: i for i, w in enumerate(vocab)}
ids = []
for ln in lines:
    ws = ln.split()
    if not ws:
        continue
    ids.extend(ix.get(w, -1) for w in ws)
    ids.extend([-2] * a.window)  # section break: no pair crosses it
ids = np.array(ids, dtype=np.int32)
print(f'{len(lines)} sections, {len(ids)} positions, vocab {V} ({time.time()-t0:.0f}s)', file=sys.stderr)

C = sp.csr_matrix((V, V), dtype=np.float64)
for d in range(1, a.window + 1):
    x, y = ids[:-d], ids[d:]
    ok = (x >= 0) & (y >= 0)
    # a section break of `window` markers keeps pairs inside a section
    xs, ys = x[ok], y[ok]
    w = np.full(len(xs), 1.0 / d)
    M = sp.coo_matrix((w, (xs, ys)), shape=(V, V)).tocsr()
    C = C + M + M.T
print(f'co-occurrence nnz {C.nnz} ({time.time()-t0:.0f}s)', file=sys.stderr)

# PPMI with smoothed context distribution
total = C.sum()
row = np.asarray(C.sum(axis=1)).ravel()
col = np.asarray(C.sum(axis=0)).ravel() ** a.alpha
col = col / col.sum()
C = C.tocoo()
pmi = np.log((C.data / total) / ((row[C.row] / total) * col[C.col]))
keep = pmi > 0
P = sp.csr_matrix((pmi[keep], (C.row[keep], C.col[keep])), shape=(V, V))
print(f'PPMI nnz {P.nnz} ({time.time()-t0:.0f}s)', file=sys.stderr)

if a.table:
    # first-order associations: the K partners of highest PPMI with enough evidence
    freq = np.array([cnt[w] for w in vocab], dtype=np.float64)
    Pt = P.tocsr()
    nb = np.full((V, a.table), 65535, dtype=np.uint16)
    wt = np.zeros((V, a.table), dtype=np.uint8)
    for i in range(V):
        s0, s1 = Pt.indptr[i], Pt.indptr[i + 1]
        js, vs = Pt.indices[s0:s1], Pt.data[s0:s1]
        ok = (freq[js] >= a.table_min) & (js != i)
        js, vs = js[ok], vs[ok]
        if not len(js):
            continue
        top = np.argsort(-vs)[: a.table]
        nb[i, : len(top)] = js[top]
        wt[i, : len(top)] = np.clip(np.round(vs[top] / 10 * 255), 1, 255)  # PPMI / 10 in 1/255 steps
    terms = '\n'.join(vocab).encode('utf8')
    head = {'format': 'git-mem word association table', 'version': 1, 'k': a.table, 'count': V,
            'termsBytes': len(terms), 'method': f'PPMI(window {a.window}, 1/d, alpha {a.alpha}) top {a.table}, partners >= {a.table_min}',
            'source': a.source}
    write_table(a.out + '.tbl', b'GMWX1\n', head, terms, nb.astype('<u2'), wt)
    print(f'wrote {a.out}.tbl ({time.time()-t0:.0f}s)', file=sys.stderr)
    if a.no_svd:
        sys.exit(0)

U, S, _ = svds(P, k=a.dim)
order = np.argsort(-S)
U, S = U[:, order], S[order]
E = U * (S ** a.power)
E /= np.linalg.norm(E, axis=1, keepdims=True) + 1e-12
scale = np.abs(E).max(axis=1) / 127.0
Q = np.round(E / scale[:, None]).astype(np.int8)
print(f'SVD {a.dim} ({time.time()-t0:.0f}s)', file=sys.stderr)

terms = '\n'.join(vocab).encode('utf8')
head = {
    'format': 'git-mem word associations',
    'version': 1,
    'dim': a.dim,
    'count': V,
    'termsBytes': len(terms),
    'method': f'PPMI(window {a.window}, 1/d, alpha {a.alpha}) + SVD {a.dim}, U*S^{a.power}, int8',
    'tokens': int((ids >= 0).sum()),
    'source': a.source,
}
write_table(a.out, b'GMWA1\n', head, terms, scale.astype('<f4'), Q)
print(f'wrote {a.out}: {V} terms x {a.dim} ({time.time()-t0:.0f}s)', file=sys.stderr)
