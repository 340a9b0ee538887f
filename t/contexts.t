#!/usr/bin/perl

# Module contexts: a directive set in mysql {} is inherited by every
# server {} that does not set it, and a server's own value wins.  Shown
# with the mysql module's idle_timeout and readconn's readconn_role, both
# filled by the generic slot setters into the module's own conf and
# completed by its merge_conf hook.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Time::HiRes qw(time);
use Sluice::Test;

my $t = Sluice::Test->new;
plan skip_all => 'no readconn' unless $t->has_module('readconn');

# the mysql-level values come after the server blocks on purpose: the
# merge runs once the whole file is parsed
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    upstream both {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream both;
    }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream both;
        idle_timeout 0;
        readconn_role primary;
    }
    idle_timeout 1s;
    readconn_role replica;
}
EOF
$t->run;
$t->plan(6);

# the server with its own values first, so its session is idle the longer
my $own = $t->dbh(port => $t->port(1));
my $inherits = $t->dbh(port => $t->port(0));

is($inherits && $inherits->selectrow_array('SELECT @@server_id'), 2,
   'a server without readconn_role takes mysql {}\'s: replica');
is($own && $own->selectrow_array('SELECT @@server_id'), 1,
   'a server with its own readconn_role keeps it: primary');

my $t0 = time;
ok(wait_for(sub { $t->grep_log(qr/closed after idle_timeout/) },
            timeout => 10, what => 'the idle session to be closed'),
   'a server without idle_timeout takes mysql {}\'s 1s');
cmp_ok(time - $t0, '>=', 0.5, 'not at once');
ok(!defined $inherits->selectrow_array('SELECT 2'),
   'that client finds its connection closed');
is($own->selectrow_array('SELECT 3'), 3,
   'the server with its own idle_timeout 0 left its (longer idle) session '
   . 'open');
undef $own;                 # so that sluice can stop without waiting
