external available : unit -> bool = "httpz_simd_available" [@@noalloc]

let available = available ()

external field_lines :
  Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> int array -> int array ->
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_field_lines_byte" "httpz_simd_field_lines"
  [@@noalloc]

external value_end : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_value_end_byte" "httpz_simd_value_end"
  [@@noalloc]

external name_end : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_name_end_byte" "httpz_simd_name_end"
  [@@noalloc]
