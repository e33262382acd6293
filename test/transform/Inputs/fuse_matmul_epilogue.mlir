// Text twin of the schedule built in Python by
// test/pytest/test_transform_driver.py (cuvil.transform_builder): both must
// produce identical payload IR. Steps: match the epilogue (linalg.generic),
// find its matmul producer (match -> verify dependency), tile the epilogue
// into an scf.forall, fuse the matmul into that loop, vectorize the function.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @fuse_matmul_epilogue(%root: !transform.any_op {transform.readonly}) {
    %epilogue = transform.structured.match ops{["linalg.generic"]} in %root
      : (!transform.any_op) -> !transform.any_op
    %matmul = transform.get_producer_of_operand %epilogue[0] : (!transform.any_op) -> !transform.any_op
    %tiled, %loop = transform.structured.tile_using_forall %epilogue tile_sizes [8, 32]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fused, %loop2 = transform.structured.fuse_into_containing_op %matmul into %loop
      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)
    %func = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %vectorized = transform.structured.vectorize_children_and_apply_patterns %func
      : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
