"""GPT-2 124M (examples/pytorch/train_gpt2.py's model, data and optimizer), 3 steps. After step 1,
every parameter, gradient and AdamW state is copied to the host: `save PATH` writes them (run it
natively), `compare PATH` (run it under deepum) prints each tensor that differs, with the 2 MiB
blocks its differing elements span.

    python3 gpt2_snapshot_compare.py save /tmp/native.pt
    LD_PRELOAD=... DEEPUM_RESIDENT_LIMIT=...B python3 gpt2_snapshot_compare.py compare /tmp/native.pt
"""
import sys, os, torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "pytorch"))
import train_gpt2 as t

mode, path = sys.argv[1], sys.argv[2]
attention = sys.argv[3] if len(sys.argv) > 3 else "sdpa"
t.configure_determinism(torch.device("cuda"))
dev = torch.device("cuda")
torch.manual_seed(1234)
model = t.GPT(50257, 1024, 12, 12, 768, attention).to(dev)
opt = t.make_optimizer(model, 3e-4)
snap = {}
for step in range(3):
    x, y = t.make_batch(step, 1234, 8, 1024, 50257, dev)
    opt.zero_grad(set_to_none=True)
    loss = model(x, y)
    loss.backward()
    opt.step()
    torch.cuda.synchronize()
    print(f"step {step} loss {loss.item()!r}", flush=True)
    if step == 1:
        for name, p in model.named_parameters():
            st = opt.state[p]
            for kind, ten in (("param", p.data), ("grad", p.grad), ("m", st["exp_avg"]), ("v", st["exp_avg_sq"])):
                snap[f"{name}:{kind}"] = (ten.data_ptr(), ten.detach().to("cpu", copy=True).flatten())
print(f"summary peak_reserved_bytes {torch.cuda.max_memory_reserved()}")
if mode == "save":
    torch.save({k: v[1] for k, v in snap.items()}, path)
    sys.exit(0)
ref = torch.load(path)
ndiff_total = 0
for k, (ptr, ten) in snap.items():
    d = (ten != ref[k]).nonzero().flatten()
    if d.numel() == 0:
        continue
    ndiff_total += d.numel()
    a0, a1 = ptr + 4 * int(d[0]), ptr + 4 * int(d[-1])
    print(f"DIFF {k} numel {ten.numel()} ndiff {d.numel()} idx {int(d[0])}..{int(d[-1])} "
          f"ptr {ptr:#x} addr {a0:#x}..{a1:#x} blocks2M {a0 >> 21:#x}..{a1 >> 21:#x} "
          f"maxabs {float((ten[d] - ref[k][d]).abs().max()):.3g}")
print(f"tensors compared {len(snap)} differing elements {ndiff_total}")
