(* Upload's pure parts: the display file name and the error statuses. *)
open Httpz_server
module M = Httpz.Multipart

let sanitise () =
  List.iter
    (fun (input, want) -> Alcotest.(check string) (String.escaped input) want (Upload.sanitise_filename input))
    [ ("a.txt", "a.txt"); ("../../etc/passwd", "passwd"); ("/abs/path/x.pdf", "x.pdf");
      ("C:\\Users\\me\\r\xc3\xa9sum\xc3\xa9.pdf", "r\xc3\xa9sum\xc3\xa9.pdf"); ("dir/..", ""); ("..", ""); (".", "");
      ("a\r\nb\000c\x7fd\te", "abcde"); ("", ""); ("trailing/", ""); ("mixed\\and/slash\\z", "z");
      (String.make 300 'x', String.make 255 'x'); ("...", "...") ]

let statuses () =
  let st e = Httpz.Status.code (Upload.status e) in
  List.iter
    (fun (e, code) -> Alcotest.(check int) (Upload.error_to_string e) code (st e))
    [ (Upload.Not_multipart, 415); (Upload.Bad_multipart M.Malformed_header, 400);
      (Upload.Bad_multipart M.Malformed_delimiter, 400); (Upload.Bad_multipart M.Truncated, 400);
      (Upload.Bad_multipart M.No_boundary, 400); (Upload.Bad_multipart M.Too_many_parts, 413);
      (Upload.Bad_multipart M.Header_too_large, 413); (Upload.Bad_multipart M.Too_large, 413); (Upload.No_name, 400);
      (Upload.Field_too_large, 413); (Upload.File_too_large, 413); (Upload.Too_many_files, 413);
      (Upload.Disk_full "x", 507); (Upload.Disk_error "x", 500) ]

let () =
  Alcotest.run "upload"
    [ ("upload", [ Alcotest.test_case "sanitise_filename" `Quick sanitise; Alcotest.test_case "statuses" `Quick statuses ]) ]
