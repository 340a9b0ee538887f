#!/usr/bin/perl

# The Redis tier's configuration (issue 22, first step): `redis NAME { }`
# in mysql { } and `cache_redis NAME;` in mysql { } or a server.  `sluice
# -t` accepts a good one and refuses each kind of mistake with file:line.
# (The tier itself is not built yet: nothing here talks to Redis.)

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('cache', 'cache_redis', 'readconn');

# $redis: the redis block's body; $srv: more of the cached server's
# directives; $main: more of mysql { }'s
sub conf {
    my (%o) = @_;
    my $redis = $o{redis} // 'server 127.0.0.1:6379;';
    my $srv = $o{srv} // 'cache_redis shared;';
    my $main = $o{main} // '';
    $t->write_file_expand('r.conf', <<"EOF");
events { worker_connections 10; }
mysql {
    user app { password "x"; }
    cache_zone qc size=8m;
    $main
    redis shared {
        $redis
    }
    upstream u {
        monitor_user m; monitor_password "m";
        server 127.0.0.1:1 role=primary;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream u;
             filters cache; cache qc;
             $srv
    }
    server { listen 127.0.0.1:%%PORT_1%%; router readconn; upstream u; }
}
EOF
    my ($rc, $out) = $t->test_config(conf => 'r.conf');
    return $rc == 0 ? 'accepted' : $out;
}

$t->plan(18);

is(conf(), 'accepted', 'a redis block and a server that uses it');
is(conf(redis => 'server 127.0.0.1:6379; server unix:/run/redis.sock; '
                 . 'user sluice; password "pw"; db 3; timeout 50ms; '
                 . 'prefix "app1:"; cluster off; queue 1m;'),
   'accepted', 'every directive of the block');
is(conf(redis => 'server 127.0.0.1:7000; server 127.0.0.1:7001; '
                 . 'cluster on;'),
   'accepted', 'a cluster\'s seeds');
is(conf(srv => '', main => 'cache_redis shared;'), 'accepted',
   'mysql { }\'s cache_redis goes to the servers with the cache only');

like(conf(srv => 'cache_redis other;'),
     qr/r\.conf:\d+: unknown redis "other"/, 'an unknown name (server)');
like(conf(srv => '', main => 'cache_redis other;'),
     qr/r\.conf:\d+: unknown redis "other"/, 'an unknown name (mysql)');
like(conf(redis => ''), qr/r\.conf:\d+: no server in redis "shared"/,
     'a block without a server');
like(conf(redis => 'server nowhere.invalid:6379;'),
     qr/r\.conf:\d+: cannot resolve server "nowhere\.invalid:6379"/,
     'a server that does not resolve');
like(conf(redis => 'server 127.0.0.1;'),
     qr/r\.conf:\d+: invalid server address "127\.0\.0\.1"/,
     'a server without a port');
like(conf(redis => 'server 127.0.0.1:6379; db 1; cluster on;'),
     qr/r\.conf:\d+: "db" with "cluster on"/, 'db with a cluster');
like(conf(redis => 'server 127.0.0.1:6379; user sluice;'),
     qr/r\.conf:\d+: "user" without "password"/, 'user without password');
like(conf(redis => 'server 127.0.0.1:6379; timeout 0;'),
     qr/r\.conf:\d+: "timeout" is not in 1ms to 10s/, 'timeout 0');
like(conf(redis => 'server 127.0.0.1:6379; queue 100;'),
     qr/r\.conf:\d+: "queue" is not in 1k to 1g/, 'a queue too small');
like(conf(redis => 'server 127.0.0.1:6379; queue lots;'),
     qr/r\.conf:\d+: .*"lots"/, 'a queue that is not a size');
like(conf(redis => 'server 127.0.0.1:6379; prefix "a{b}";'),
     qr/r\.conf:\d+: "prefix" is longer than 64 bytes or holds a brace/,
     'a prefix with a brace (a hash tag)');
like(conf(main => 'redis shared { server 127.0.0.1:1; }'),
     qr/r\.conf:\d+: duplicate redis "shared"/, 'a name declared twice');

# the server without the cache names the service itself
$t->write_file_expand('r.conf', <<'EOF');
events { worker_connections 10; }
mysql {
    user app { password "x"; }
    redis shared { server 127.0.0.1:6379; }
    upstream u { server 127.0.0.1:1 role=primary; }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream u;
             cache_redis shared;
    }
}
EOF
my ($rc, $out) = $t->test_config(conf => 'r.conf');
like($out, qr/r\.conf:7: "cache_redis shared" needs "filters cache" in its /,
     'cache_redis on a server without the cache, at its line');
ok($rc != 0, 'is refused');
