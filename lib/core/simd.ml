external available : unit -> bool = "httpz_simd_available" [@@noalloc]

let available = available ()

external field_lines :
  Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> int array -> int array ->
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_field_lines_byte" "httpz_simd_field_lines"
  [@@noalloc]

external target_end : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_target_end_byte" "httpz_simd_target_end"
  [@@noalloc]

external hostname_end : Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_hostname_end_byte" "httpz_simd_hostname_end"
  [@@noalloc]

external find_byte :
  Bigstring.t -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_simd_find_byte_byte" "httpz_simd_find_byte"
  [@@noalloc]

external cap : int -> int = "httpz_simd_set_level" [@@noalloc]
