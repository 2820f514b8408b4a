"""Einsum: torch.einsum differentiated by torch.autograd — matrix products
in several layouts, batch and ellipsis broadcasting (summed back to the
smaller input), labels one input sums away (broadcast back), one-input
equations, diagonals (a label repeated in an input: the gradient goes back
on the diagonal; with an ellipsis too, broadcast or not), outputs
repeating a label (torch.einsum refuses them: torch.diag_embed is the
same function), operands and outputs above rank 8, and float32."""

import torch

from gradcase import F32, a_str


def _einsum(b, name, equation, shapes, dtype=None, hvp=False, fn=None):
    kwargs = {} if dtype is None else {"dtype": dtype}
    inputs = [b.normal(*s, **kwargs) for s in shapes]
    b.add("Einsum_" + name, "Einsum", inputs,
          fn or (lambda *xs: torch.einsum(equation, *xs)),
          attrs={"equation": a_str(equation), "N": ("int", len(shapes))},
          hvp=hvp)


def cases(b):
    _einsum(b, "matmul", "ij,jk->ik", [(3, 4), (4, 5)], hvp=True)
    _einsum(b, "matmul_transposed", "ji,kj->ki", [(4, 3), (5, 4)])
    _einsum(b, "attention", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)])
    _einsum(b, "batch_middle", "ibj,jbk->bki", [(3, 2, 4), (4, 2, 5)])
    _einsum(b, "ellipsis_broadcast", "...ij,...jk->...ik",
            [(1, 3, 4), (2, 4, 5)])
    _einsum(b, "ellipsis_rank", "...ij,...jk->...ik",
            [(2, 3, 3, 4), (4, 5)])
    _einsum(b, "summed_in_one", "ij,jk->i", [(3, 4), (4, 5)])
    _einsum(b, "dot", "i,i->", [(6,), (6,)], hvp=True)
    _einsum(b, "outer", "i,j->ij", [(3,), (4,)])
    _einsum(b, "transpose", "ijk->kij", [(2, 3, 4)])
    _einsum(b, "sum_axis", "ij->j", [(3, 4)])
    _einsum(b, "ellipsis_sum", "...j->...", [(2, 3, 4)])
    _einsum(b, "ellipsis_in_one_input", "...ij,jk->...ik",
            [(2, 3, 4), (4, 5)])
    _einsum(b, "ellipsis_after_summed_label", "i...,...->...",
            [(3, 1), (2, 5)])
    _einsum(b, "float32", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], dtype=F32)
    _einsum(b, "diagonal", "ii->i", [(4, 4)])
    _einsum(b, "trace", "ii->", [(4, 4)], hvp=True)
    _einsum(b, "diagonal_summed", "iij->j", [(3, 3, 2)])
    _einsum(b, "diagonal_kept_and_summed", "iijk->ki", [(3, 3, 2, 4)])
    _einsum(b, "diagonal_operand", "iij,jk->ik", [(3, 3, 4), (4, 5)])
    _einsum(b, "diagonal_both", "ii,jj->ij", [(3, 3), (2, 2)])
    _einsum(b, "diagonal_contracted", "ii,ij->j", [(3, 3), (3, 4)])
    _einsum(b, "inflate", "i->ii", [(4,)], fn=torch.diag_embed)
    # A repeated label and an ellipsis in one subscript (issue 19).
    _einsum(b, "diagonal_ellipsis", "...ii->...i", [(2, 3, 3)])
    _einsum(b, "diagonal_ellipsis_between", "i...i->...", [(3, 2, 4, 3)])
    _einsum(b, "diagonal_ellipsis_after", "ii...,i->...",
            [(3, 3, 2, 4), (3,)], hvp=True)
    _einsum(b, "diagonal_ellipsis_broadcast", "...ii,...i->...i",
            [(2, 1, 3, 3), (4, 3)], hvp=True)
    _einsum(b, "diagonal_ellipsis_empty", "...ii,...i->...", [(3, 3), (2, 3)])
    _einsum(b, "diagonal_ellipsis_other_longer", "...ii,...ij->...j",
            [(3, 3), (2, 1, 3, 4)])
    _einsum(b, "diagonal_ellipsis_ones", "i...i,...->...",
            [(3, 1, 3), (2, 5)])
    _einsum(b, "diagonal_ellipsis_f32", "...jj,...jk->...k",
            [(2, 3, 3), (2, 3, 4)], dtype=F32)
    # Above rank 8: shapes that spill, folded by the kernel.
    _einsum(b, "rank10_contract_transposed", "abcdefghij,jkc->kjhgfedbia",
            [(2, 1, 3, 1, 1, 1, 1, 1, 2, 2), (2, 2, 3)])
    _einsum(b, "rank10_ellipsis_broadcast", "...ij,...jk->...ik",
            [(2, 1, 1, 1, 1, 1, 1, 1, 2, 3), (1, 2, 1, 1, 1, 1, 1, 1, 3, 2)])
    _einsum(b, "rank9_summed_in_one", "abcdefghi,ij->aj",
            [(2, 1, 2, 1, 1, 1, 1, 2, 3), (3, 2)])
    _einsum(b, "rank10_diagonal", "aabcdefghi->ib",
            [(2, 2, 1, 2, 1, 1, 1, 1, 2, 3)])
