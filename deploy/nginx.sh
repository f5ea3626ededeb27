# Writes an nginx configuration for instances on loopback (sourced, not run), from
# deploy/nginx.conf.template, with every file of nginx's own under one directory, for
# deploy/local.sh and bench/redis.sh.
#
#   write_nginx_conf DIR PORT "SERVER_LINES"    writes DIR/nginx.conf and DIR/ferry.conf
#
# SERVER_LINES holds one `server HOST:PORT max_fails=1 fail_timeout=5s;` line per instance.
write_nginx_conf() {
  local dir="$1" port="$2" servers="$3" access="${4:-$1/access.log}"
  local template user=""
  # As root, nginx's workers would run as nobody and could not use the directory.
  [[ $(id -u) == 0 ]] && user="user root;"
  template="$(dirname "${BASH_SOURCE[0]}")/nginx.conf.template"
  mkdir -p "$dir"
  python3 - "$template" "$port" "$servers" >"$dir/ferry.conf" <<'PY'
import sys
template, port, servers = sys.argv[1], sys.argv[2], sys.argv[3]
print(open(template).read().replace("{port}", port).replace("{servers}", servers.rstrip("\n")))
PY
  cat >"$dir/nginx.conf" <<CONF
daemon off;
$user
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log $access;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  include $dir/ferry.conf;
}
CONF
}
