type t =
  | Bad_method | Bad_target | Target_too_long | Bad_version | Unsupported_version
  | Bad_request_line | Bare_cr | Bare_lf | Bad_header_name | Space_before_colon | Obs_fold
  | Bad_header_value | Too_many_headers | Head_too_large | Bad_content_length
  | Conflicting_content_length | Content_too_large | Length_and_chunked | Chunked_not_final
  | Unsupported_transfer_coding | Transfer_encoding_http10 | Missing_host | Duplicate_host
  | Bad_host

let status = function
  | Target_too_long -> 414
  | Unsupported_version -> 505
  | Too_many_headers | Head_too_large -> 431
  | Content_too_large -> 413
  | Unsupported_transfer_coding -> 501
  | Bad_method | Bad_target | Bad_version | Bad_request_line | Bare_cr | Bare_lf
  | Bad_header_name | Space_before_colon | Obs_fold | Bad_header_value | Bad_content_length
  | Conflicting_content_length | Length_and_chunked | Chunked_not_final
  | Transfer_encoding_http10 | Missing_host | Duplicate_host | Bad_host -> 400

let to_string = function
  | Bad_method -> "bad_method" | Bad_target -> "bad_target"
  | Target_too_long -> "target_too_long" | Bad_version -> "bad_version"
  | Unsupported_version -> "unsupported_version" | Bad_request_line -> "bad_request_line"
  | Bare_cr -> "bare_cr" | Bare_lf -> "bare_lf" | Bad_header_name -> "bad_header_name"
  | Space_before_colon -> "space_before_colon" | Obs_fold -> "obs_fold"
  | Bad_header_value -> "bad_header_value" | Too_many_headers -> "too_many_headers"
  | Head_too_large -> "head_too_large" | Bad_content_length -> "bad_content_length"
  | Conflicting_content_length -> "conflicting_content_length"
  | Content_too_large -> "content_too_large" | Length_and_chunked -> "length_and_chunked"
  | Chunked_not_final -> "chunked_not_final"
  | Unsupported_transfer_coding -> "unsupported_transfer_coding"
  | Transfer_encoding_http10 -> "transfer_encoding_http10" | Missing_host -> "missing_host"
  | Duplicate_host -> "duplicate_host" | Bad_host -> "bad_host"

let describe = function
  | Bad_method -> "The request method is not a valid token."
  | Bad_target -> "The request target is malformed."
  | Target_too_long -> "The request target is longer than this server accepts."
  | Bad_version -> "The HTTP version is malformed."
  | Unsupported_version -> "Only HTTP/1.0 and HTTP/1.1 are supported."
  | Bad_request_line -> "The request line is malformed."
  | Bare_cr -> "A carriage return is not followed by a line feed."
  | Bare_lf -> "A line ends in a line feed without a carriage return."
  | Bad_header_name -> "A header field name is malformed."
  | Space_before_colon -> "Whitespace between a header field name and its colon."
  | Obs_fold -> "A header field is folded across lines (obsolete line folding)."
  | Bad_header_value -> "A header field value contains a control character."
  | Too_many_headers -> "The request has more header fields than this server accepts."
  | Head_too_large -> "The request head is larger than this server accepts."
  | Bad_content_length -> "The Content-Length value is not a valid decimal number."
  | Conflicting_content_length -> "Several Content-Length values disagree."
  | Content_too_large -> "The request body is larger than this server accepts."
  | Length_and_chunked -> "Content-Length and Transfer-Encoding are both present."
  | Chunked_not_final -> "The final transfer coding is not chunked."
  | Unsupported_transfer_coding -> "A transfer coding other than chunked is not supported."
  | Transfer_encoding_http10 -> "Transfer-Encoding is not allowed in an HTTP/1.0 request."
  | Missing_host -> "An HTTP/1.1 request must have a Host header field."
  | Duplicate_host -> "The request has more than one Host header field."
  | Bad_host -> "The Host header field value is malformed."

let all =
  [ Bad_method; Bad_target; Target_too_long; Bad_version; Unsupported_version;
    Bad_request_line; Bare_cr; Bare_lf; Bad_header_name; Space_before_colon; Obs_fold;
    Bad_header_value; Too_many_headers; Head_too_large; Bad_content_length;
    Conflicting_content_length; Content_too_large; Length_and_chunked; Chunked_not_final;
    Unsupported_transfer_coding; Transfer_encoding_http10; Missing_host; Duplicate_host;
    Bad_host ]
