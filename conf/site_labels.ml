let label (s : Conf_file.site) = match s.names with n :: _ -> n | [] -> "default"

let register (conf : Conf_file.t) =
  let sites = Array.of_list conf.sites in
  let default = match conf.unknown_host with Default_site -> conf.default_site | Refuse _ -> -1 in
  let hosts = Host_match.create ~names:(Array.map (fun (s : Conf_file.site) -> s.names) sites) ~default in
  Request_metrics.set_sites ~names:(Array.map label sites) ~find:(Host_match.find hosts) ~no_host:conf.default_site
