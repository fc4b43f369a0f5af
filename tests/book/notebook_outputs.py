#!/usr/bin/env python3
"""Writes tests/data/ch03-notebook-outputs.json: every output the chapter's notebook prints, mapped to the
lesson step that shows it, for test_book.cpp's checklist.

Usage: python3 tests/book/notebook_outputs.py PATH/TO/ch03.ipynb
(ch03/01_main-chapter-code/ch03.ipynb of rasbt/LLMs-from-scratch; the committed JSON came from commit
01c4b8f645911ba52105eb9951ab469a76fb4d86, whose outputs were printed by PyTorch 2.2.2.)

Each code cell with output is listed in CELLS with what each of its print() calls shows, in order:
(label, lesson, step, kind). `label` is the text print() puts before the value ("Sum:"; print's
separator, a space, is dropped with it), `kind` is "tensor" (print(tensor)), "shape" (print(x.shape): the
step's "shape:" line) or "python" (a Python number). The autograd suffix (", grad_fn=<...>") PyTorch
adds to tensors that need gradients is removed: attn's tensors are plain data.
"""
import json
import re
import sys

# Cells in the book's order. The notebook runs 3.6.2's class and its use in one cell (131) before the
# batched-product example (136, 138); the book's text explains the example first and uses the module at
# the end of the section, which is the order `attn mha` follows.
CELLS = [
    (28, [("", "simple", "attn_scores_2", "tensor")]),
    (30, [("", "simple", "res", "tensor"), ("", "simple", "res_torch_dot", "tensor")]),
    (33, [("Attention weights:", "simple", "attn_weights_2_tmp", "tensor"),
          ("Sum:", "simple", "attn_weights_2_tmp_sum", "tensor")]),
    (35, [("Attention weights:", "simple", "attn_weights_2_naive", "tensor"),
          ("Sum:", "simple", "attn_weights_2_naive_sum", "tensor")]),
    (37, [("Attention weights:", "simple", "attn_weights_2", "tensor"),
          ("Sum:", "simple", "attn_weights_2_sum", "tensor")]),
    (40, [("", "simple", "context_vec_2", "tensor")]),
    (47, [("", "all-tokens", "attn_scores_loop", "tensor")]),
    (49, [("", "all-tokens", "attn_scores", "tensor")]),
    (51, [("", "all-tokens", "attn_weights", "tensor")]),
    (53, [("Row 2 sum:", "all-tokens", "row_2_sum", "python"),
          ("All row sums:", "all-tokens", "all_row_sums", "tensor")]),
    (55, [("", "all-tokens", "all_context_vecs", "tensor")]),
    (57, [("Previous 2nd context vector:", "all-tokens", "context_vec_2", "tensor")]),
    (70, [("", "trainable", "query_2", "tensor")]),
    (72, [("keys.shape:", "trainable", "keys", "shape"), ("values.shape:", "trainable", "values", "shape")]),
    (75, [("", "trainable", "attn_score_22", "tensor")]),
    (77, [("", "trainable", "attn_scores_2", "tensor")]),
    (80, [("", "trainable", "attn_weights_2", "tensor")]),
    (83, [("", "trainable", "context_vec_2", "tensor")]),
    (86, [("", "trainable", "sa_v1_output", "tensor")]),
    (89, [("", "trainable", "sa_v2_output", "tensor")]),
    (98, [("", "causal", "attn_weights", "tensor")]),
    (100, [("", "causal", "mask_simple", "tensor")]),
    (102, [("", "causal", "masked_simple", "tensor")]),
    (105, [("", "causal", "masked_simple_norm", "tensor")]),
    (108, [("", "causal", "masked", "tensor")]),
    (110, [("", "causal", "causal_attn_weights", "tensor")]),
    (115, [("", "dropout", "dropout_ones", "tensor")]),
    (116, [("", "dropout", "dropout_attn_weights", "tensor")]),
    (120, [("", "causal", "batch", "shape")]),
    (121, [("", "causal", "context_vecs", "tensor"), ("context_vecs.shape:", "causal", "context_vecs", "shape")]),
    (127, [("", "mha-wrapper", "context_vecs", "tensor"),
           ("context_vecs.shape:", "mha-wrapper", "context_vecs", "shape")]),
    (136, [("", "mha", "a_matmul", "tensor")]),
    (138, [("First head:\n", "mha", "first_res", "tensor"), ("\nSecond head:\n", "mha", "second_res", "tensor")]),
    (131, [("", "mha", "context_vecs", "tensor"), ("context_vecs.shape:", "mha", "context_vecs", "shape")]),
]

# Outputs that are not the chapter's computation, with the reason.
NOT_LESSONS = {3: "the installed PyTorch's version (print(\"torch version:\", version(\"torch\")))"}

GRAD_FN = re.compile(r",\s*grad_fn=<\w+>\)")


def cell_output(cell):
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def split(text, items):
    """The value each print() of `items` printed, in order."""
    values, at = [], 0
    for i, (label, *_rest) in enumerate(items):
        assert text.startswith(label, at), (label, text[at:at + 40])
        at += len(label)
        if label and text.startswith(" ", at):
            at += 1  # print's separator
        if i + 1 < len(items):
            nxt = items[i + 1][0]
            end = text.index(nxt, at + 1) if nxt else text.index("\n", text.index(")", at)) + 1
        else:
            end = len(text)
        values.append(GRAD_FN.sub(")", text[at:end].rstrip("\n")))
        at = end
    return values


def main(path):
    cells = json.load(open(path, encoding="utf-8"))["cells"]
    heading, headings = "", {}
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown":
            for line in "".join(c["source"]).splitlines():
                if re.match(r"#{1,3} \d", line) or line.startswith("# Chapter"):
                    heading = line.lstrip("# ").strip()
        headings[i] = heading
    with_output = {i for i, c in enumerate(cells) if c["cell_type"] == "code" and cell_output(c)}
    listed = {i for i, _ in CELLS} | set(NOT_LESSONS)
    assert with_output == listed, ("cells with output not listed, or listed without output", with_output ^ listed)
    entries = []
    for index, items in CELLS:
        values = split(cell_output(cells[index]), items)
        source = "".join(cells[index]["source"])
        for (label, lesson, step, kind), value in zip(items, values):
            entries.append({"cell": index, "section": headings[index], "label": label.strip(), "printed": value,
                            "lesson": lesson, "step": step, "kind": kind})
        assert source  # every listed cell is code with output
    others = [{"cell": i, "printed": cell_output(cells[i]).rstrip("\n"), "why": why} for i, why in NOT_LESSONS.items()]
    doc = {"source": "rasbt/LLMs-from-scratch ch03/01_main-chapter-code/ch03.ipynb at "
                     "01c4b8f645911ba52105eb9951ab469a76fb4d86 (outputs printed by PyTorch 2.2.2)",
           "note": "Every output the notebook prints, in the book's order, with the lesson step that shows it; "
                   "generated by tests/book/notebook_outputs.py. 'printed' is the value without print's label "
                   "and without PyTorch's grad_fn suffix.",
           "entries": entries, "not_lesson_outputs": others}
    with open("tests/data/ch03-notebook-outputs.json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{len(entries)} printed values from {len(CELLS)} cells written to tests/data/ch03-notebook-outputs.json")


if __name__ == "__main__":
    main(sys.argv[1])
