(* `httpz check --config FILE`: reads the configuration file as `serve`
   would (syntax, values, roots, certificates) and says so in one line:
   exit 0 with a summary on stdout, or exit 2 with the one error on
   stderr, as FILE:LINE:COL: message. *)

open Cmdliner
module Conf_file = Httpz_conf.Conf_file
module Conf_report = Httpz_conf.Conf_report

let run file =
  match Result.bind (Conf_file.read file) (fun t -> Result.map (fun () -> t) (Conf_report.check_files t)) with
  | Ok t -> print_endline (Conf_report.summary t); 0
  | Error e -> prerr_endline e; 2

let config =
  Arg.(required & opt (some string) None
       & info [ "c"; "config" ] ~docv:"FILE" ~doc:"The configuration file to check.")

let cmd =
  let doc = "check a configuration file" in
  let man = [
    `S Manpage.s_description;
    `P "Reads $(i,FILE) as $(b,httpz serve --config) would: its syntax, every directive's \
        values, that each site's root is a directory that opens, that every certificate \
        loads with its key, that error pages exist, that every user file of \
        $(b,auth_basic_user_file) is a regular file that reads (with hashes it accepts) and that \
        the access and error logs can be opened (their directory exists; nothing is created). Run it before $(b,kill -HUP): a \
        reload with an invalid file changes nothing, but only the log says why.";
    `S Manpage.s_exit_status;
    `P "0: the file is valid (one summary line on standard output). 2: it is not (one line on \
        standard error, $(i,FILE):$(i,LINE):$(i,COL): the message).";
  ] in
  Cmd.v (Cmd.info "check" ~doc ~man ~exits:[]) Term.(const run $ config)
