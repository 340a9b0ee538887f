#!/usr/bin/perl

# sluice -t and -V: a valid configuration (with a glob include) passes;
# each broken one fails with exit code 1 and "FILE:LINE: message" naming
# the exact file and line; starting on a broken configuration fails the
# same way on stderr.  Needs no MariaDB: server addresses are only
# resolved, never connected to.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('readconn');
my $dir = $t->testdir;

# A config split over a glob include: users and the upstream in conf.d/,
# plus a glob that matches nothing (which is fine).
$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 2;
worker_shutdown_timeout 1m30s;
worker_sched_policy other;
worker_priority -5;
events { worker_connections 100; }
mysql {
    buffer_size 16k;
    include conf.d/*.conf;
    include empty.d/*.conf;
    server {
        listen 127.0.0.1:%%PORT_0%%;
        listen unix:%%TESTDIR%%/sluice.sock backlog=16;
        router readconn;
        readconn_role any;
        upstream cluster;
        idle_timeout 10m;
    }
}
EOF
$t->write_file('conf.d/10-users.conf', <<'EOF');
user app { password "secret"; }
user hashed { password_hash "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"; }
user nopass { password_hash ""; }
EOF
$t->write_file('conf.d/20-upstream.conf', <<'EOF');
upstream cluster {
    server 127.0.0.1:3306 role=primary;
    server 127.0.0.1:3307 role=replica weight=2 max_connections=10;
}
EOF

# Broken configurations.  The line marked "#<" is the one the error must
# name (in `file`, default the config itself); `msg` is the exact message
# after "FILE:LINE: ", TESTDIR standing for the test directory.
my $SERVER = <<'EOF';
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
    }
}
EOF

# A server block with one more directive, marked as the bad line.
sub server_with {
    my ($d) = @_;
    (my $c = $SERVER) =~ s/(        upstream cluster;\n)/$1        $d; #<\n/;
    return $c;
}

my @cases = (
    (map { my ($d, $v, $kind) = @$_; +{
        name => "$d $v",
        conf => server_with("$d $v"),
        msg  => "invalid value \"$v\" in \"$d\" directive, it must be $kind",
    } } ['max_handshakes', 'x', 'a non-negative integer'],
        ['max_handshakes_per_host', '-1', 'a non-negative integer'],
        ['auth_failure_threshold', 'abc', 'a non-negative integer'],
        ['auth_failure_delay', '5q',
         'a time such as 500ms, 10s, 1m30s or 2h']),
    {
        name => 'auth_failure_max_delay without a value',
        conf => server_with('auth_failure_max_delay'),
        msg  => 'invalid number of arguments in "auth_failure_max_delay" '
              . 'directive',
    },
    {
        name => 'unknown directive',
        conf => "worker_processes 1;\nworker_proceses 2; #<\n$SERVER",
        msg  => 'unknown directive "worker_proceses"',
    },
    {
        name => 'unknown worker_sched_policy',
        conf => "worker_sched_policy fifo; #<\n$SERVER",
        msg  => 'invalid value "fifo" in "worker_sched_policy" directive, '
              . 'it must be "batch" or "other"',
    },
    (map { my $v = $_; +{
        name => "worker_priority $v",
        conf => "worker_priority $v; #<\n$SERVER",
        msg  => "invalid worker_priority \"$v\" (a nice value from -20 "
              . 'to 19)',
    } } qw(20 -21 high - --5)),
    {
        name => 'listen in the main context',
        conf => "worker_processes 1;\nlisten 4000; #<\n$SERVER",
        msg  => '"listen" directive is not allowed here',
    },
    {
        name => 'readconn_role in an upstream block',
        conf => <<'EOF',
mysql {
    upstream cluster {
        server 127.0.0.1:3306 role=primary;
        readconn_role primary; #<
    }
}
EOF
        msg  => '"readconn_role" directive is not allowed here',
    },
    {
        name => 'missing ";" before the next directive',
        conf => "worker_processes 1 #<\nevents { worker_connections 10; }\n"
              . $SERVER,
        msg  => 'directive "worker_processes" is not terminated by ";"',
    },
    {
        name => 'missing ";" before "}"',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster #<
    }
}
EOF
        msg  => 'directive "upstream" is not terminated by ";"',
    },
    {
        name => 'unclosed "{"',
        # the error is at the end of the file: line 10, after 9 lines
        conf => <<'EOF',
worker_processes 1;
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
    }
EOF
        line => 10,
        msg  => 'unexpected end of file, expecting "}" to close "mysql" '
              . 'from line 2',
    },
    {
        name => 'unclosed "{" of an inner block',
        conf => <<'EOF',
mysql {
    upstream cluster {
        server 127.0.0.1:3306 role=primary;
        server 127.0.0.1:3307 role=replica;
EOF
        line => 5,
        msg  => 'unexpected end of file, expecting "}" to close "upstream" '
              . 'from line 2',
    },
    {
        name => 'include of a missing file',
        conf => "worker_processes 1;\ninclude missing.conf; #<\n$SERVER",
        msg  => 'open() "TESTDIR/missing.conf" failed '
              . '(No such file or directory)',
    },
    {
        name => 'error in a file included by a glob',
        conf => "worker_processes 1;\ninclude bad.d/*.conf;\n$SERVER",
        files => {
            'bad.d/a.conf' => "# fine\nworker_shutdown_timeout 2s;\n",
            'bad.d/b.conf' => "# broken\n\nerror_log x.log verbose; #<\n",
        },
        file => 'bad.d/b.conf',
        msg  => 'unknown log level "verbose" (debug, info, notice, warn, '
              . 'error, crit, alert)',
    },
    (map { my $a = $_; +{
        name => "invalid listen address $a",
        conf => <<"EOF",
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen $a; #<
        router readconn;
        upstream cluster;
    }
}
EOF
        msg  => qq{invalid listen address "$a" (expected PORT, ADDR:PORT, }
              . '[ADDR6]:PORT or unix:PATH)',
    } } qw(127.0.0.256:4000 localhost:4000 70000 127.0.0.1: [::1]4000
           [::1:4000)),
    {
        name => 'upstream reference to an unknown upstream',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server { #<
        listen 127.0.0.1:4000;
        router readconn;
        upstream clutser;
    }
}
EOF
        msg  => 'unknown upstream "clutser"',
    },
    {
        name => 'server without role=',
        conf => <<'EOF',
mysql {
    upstream cluster {
        server 127.0.0.1:3306 role=primary;
        server 127.0.0.1:3307 weight=2; #<
    }
}
EOF
        msg  => 'server "127.0.0.1:3307" has no role (add role=primary, '
              . 'role=replica or role=auto)',
    },
    # the monitor's directives: the upstream block is named
    (map { my ($body, $msg) = @$_; {
        name => "monitor: $msg",
        conf => <<"EOF",
mysql {
    user app { password "secret"; }
    upstream cluster { #<
        $body
    }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
    }
}
EOF
        msg  => $msg,
    } } (['monitor_user mon; server 127.0.0.1:3306 role=primary;',
          '"monitor_user" without "monitor_password"'],
         ['monitor_password pw; server 127.0.0.1:3306 role=primary;',
          '"monitor_password" without "monitor_user"'],
         ['max_replication_lag 5s; server 127.0.0.1:3306 role=primary;',
          '"monitor_interval", "monitor_connect_timeout" and '
          . '"max_replication_lag" need "monitor_user"'],
         ['monitor_user m; monitor_password p; monitor_interval 5ms; '
          . 'server 127.0.0.1:3306 role=primary;',
          '"monitor_interval" is below 10ms'],
         ['server 127.0.0.1:3306 role=auto;',
          'server "127.0.0.1:3306" has role=auto but upstream "cluster" '
          . 'has no "monitor_user"'])),
    # users_from: the directive's line is named
    (map { my ($up, $directive, $msg) = @$_; {
        name => "users_from: $msg",
        conf => <<"EOF",
mysql {
    upstream cluster {
        $up
        server 127.0.0.1:3306 role=primary;
    }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
        $directive #<
    }
}
EOF
        msg  => $msg,
    } } (['', 'users_from nowhere;',
          '"users_from": unknown upstream "nowhere"'],
         ['', 'users_from cluster;',
          '"users_from": upstream "cluster" has no "monitor_user" (the '
          . 'accounts are read with it)'],
         ['monitor_user m; monitor_password p;',
          'auth passthrough; users_from cluster;',
          '"users_from" needs "auth local"'])),
    # bad server parameters: the line with the parameter is named
    (map { my ($param, $msg) = @$_; +{
        name => "server $param",
        conf => <<"EOF",
mysql {
    upstream cluster {
        server 127.0.0.1:3306 role=primary $param; #<
    }
}
EOF
        msg  => $msg,
    } } (['role=master', 'invalid "role=master" (role=primary, '
                         . 'role=replica or role=auto)'],
         ['weight=0', 'invalid "weight=0" (1 to 1000)'],
         ['weight=1001', 'invalid "weight=1001" (1 to 1000)'],
         ['max_connections=x', 'invalid "max_connections=x"'],
         ['backup', 'invalid parameter "backup" (role=, weight=, '
                    . 'max_connections=)'])),
    {
        name => 'duplicate upstream',
        conf => <<'EOF',
mysql {
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    upstream cluster { #<
        server 127.0.0.1:3307 role=primary;
    }
}
EOF
        msg  => 'duplicate upstream "cluster"',
    },
    (map { my ($d, $msg) = @$_; +{
        name => "core $d",
        conf => "$d; #<\n$SERVER",
        msg  => $msg,
    } } (['worker_processes 0', 'invalid worker_processes "0" (a number '
                                . 'from 1 to 1024, or auto)'],
         ['worker_processes many', 'invalid worker_processes "many" (a '
                                   . 'number from 1 to 1024, or auto)'])),
    {
        name => 'invalid auth',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        auth ldap; #<
        upstream cluster;
    }
}
EOF
        msg  => 'invalid value "ldap" in "auth" directive, it must be '
              . '"local" or "passthrough"',
    },
    {
        name => 'invalid readconn_role',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        readconn_role master; #<
        upstream cluster;
    }
}
EOF
        msg  => 'invalid value "master" in "readconn_role" directive, it '
              . 'must be "primary", "replica" or "any"',
    },
    {
        name => 'invalid readconn_role in mysql {}',
        conf => <<'EOF',
mysql {
    readconn_role master; #<
    upstream cluster { server 127.0.0.1:3306 role=primary; }
}
EOF
        msg  => 'invalid value "master" in "readconn_role" directive, it '
              . 'must be "primary", "replica" or "any"',
    },
    {
        name => 'readconn_role in upstream {}',
        conf => <<'EOF',
mysql {
    upstream cluster {
        readconn_role replica; #<
        server 127.0.0.1:3306 role=primary;
    }
}
EOF
        msg  => '"readconn_role" directive is not allowed here',
    },
    {
        # inherited from mysql {}, checked per server: its block is named
        name => 'readconn_role from mysql {} with no such server',
        conf => <<'EOF',
mysql {
    readconn_role replica;
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server { #<
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
    }
}
EOF
        msg  => 'upstream "cluster" has no server for readconn_role '
              . 'replica',
    },
    {
        name => 'invalid idle_timeout in mysql {}',
        conf => "mysql {\n    idle_timeout 5x; #<\n}\n",
        msg  => 'invalid value "5x" in "idle_timeout" directive, it must '
              . 'be a time such as 500ms, 10s, 1m30s or 2h',
    },
    {
        name => 'unknown router',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readwrite; #<
        upstream cluster;
    }
}
EOF
        msg  => 'unknown router "readwrite" (compiled in: readconn',
    },
    {
        name => 'bad size',
        conf => "mysql {\n    buffer_size 10q; #<\n}\n",
        msg  => 'invalid buffer_size "10q" (1k to 64m)',
    },
    {
        name => 'bad time',
        conf => "worker_processes 1;\n\nworker_shutdown_timeout 5x; #<\n",
        msg  => 'invalid value "5x" in "worker_shutdown_timeout" directive, '
              . 'it must be a time such as 500ms, 10s, 1m30s or 2h',
    },
    {
        name => 'bad time: units out of order',
        conf => "worker_shutdown_timeout 30s1m; #<\n",
        msg  => 'invalid value "30s1m" in "worker_shutdown_timeout" '
              . 'directive, it must be a time such as 500ms, 10s, 1m30s '
              . 'or 2h',
    },
    {
        name => 'duplicate listen',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:4000;
        router readconn;
        upstream cluster;
    }
    server {
        listen 127.0.0.1:4001;
        listen 127.0.0.1:4000; #<
        router readconn;
        upstream cluster;
    }
}
EOF
        msg  => 'duplicate listen "127.0.0.1:4000" (first at '
              . 'CONF:5)',
    },
    {
        name => 'duplicate listen: *:PORT is PORT',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 4000;
        listen *:4000; #<
        router readconn;
        upstream cluster;
    }
}
EOF
        msg  => 'duplicate listen "*:4000" (first at CONF:5)',
    },
    {
        name => 'user without password',
        conf => <<'EOF',
mysql {
    user app { password "secret"; }
    user other { #<
    }
}
EOF
        msg  => 'user "other" has no "password" or "password_hash"',
    },
    (map { my $h = $_; +{
        name => "invalid password_hash \"$h\"",
        conf => <<"EOF",
mysql {
    user app {
        password_hash "$h"; #<
    }
}
EOF
        msg  => 'invalid password_hash (expected "*" and 40 hex digits, '
              . 'as in mysql.user)',
    } } ('*14E65567ABDB5135D0CFD9A70B3032C179A49EE',
         '14E65567ABDB5135D0CFD9A70B3032C179A49EE7',
         '*14E65567ABDB5135D0CFD9A70B3032C179A49EZZ',
         'secret')),
);

$t->plan(11 + 3 * @cases);

# --- a valid configuration ----------------------------------------------

my ($rc, $out) = $t->test_config;
my $conf = "$dir/sluice.conf";
is($rc, 0, 'valid config: sluice -t exits 0') or diag($out);
like($out, qr/^sluice: the configuration file \Q$conf\E syntax is ok$/m,
     'valid config: syntax is ok');
like($out, qr/^sluice: configuration file \Q$conf\E test is successful$/m,
     'valid config: test is successful');

# --- broken configurations ----------------------------------------------

my $n = 0;
for my $c (@cases) {
    my $name = sprintf 'bad-%02d.conf', ++$n;
    $t->write_file($name, $c->{conf});
    $t->write_file($_, $c->{files}{$_}) for keys %{ $c->{files} // {} };
    my $file = $c->{file} // $name;
    my $line = $c->{line} // marked_line($c->{files}{$file} // $c->{conf});
    my $msg = $c->{msg};
    $msg =~ s/TESTDIR/$dir/g;
    $msg =~ s/CONF/$dir\/$name/g;
    my $where = "$dir/$file:$line";

    my ($rc, $out) = $t->test_config(conf => $name);
    is($rc, 1, "$c->{name}: sluice -t exits 1");
    # msgs ending in "(compiled in: ..." list what the build has
    my $end = $msg =~ /compiled in: [^)]*\z/ ? '' : '$';
    like($out, qr/^sluice: \[emerg\] \Q$where: $msg\E$end/m,
         "$c->{name}: names $file:$line and says what is wrong")
        or diag($out);
    unlike($out, qr/syntax is ok|test is successful/,
           "$c->{name}: nothing claims success");
}

sub marked_line {
    my ($text) = @_;
    my @l = split /\n/, $text;
    my ($i) = grep { $l[$_] =~ /#<\s*$/ } 0 .. $#l;
    die "no #< marker in\n$text" unless defined $i;
    return $i + 1;
}

# --- sluice -V ----------------------------------------------------------

my $bin = $t->binary;
my $v = qx{"$bin" -V 2>&1};
is($? >> 8, 0, 'sluice -V exits 0');
like($v, qr/^sluice version \d+\.\d+\.\d+$/m, '-V prints the version');

# the configure arguments this tree's binary was built with
my $src = "$Sluice::Test::TOP/objs/slc_modules.c";
SKIP: {
    skip 'SLUICE_BINARY is not this tree\'s binary', 1
        if $bin ne "$Sluice::Test::TOP/objs/sluice" || !-r $src;
    my ($args) = Sluice::Sandbox::slurp($src)
        =~ /slc_configure_args\[\] = "((?:[^"\\]|\\.)*)"/;
    $args =~ s/\\(.)/$1/g;
    like($v, qr/^configure arguments:\Q@{[ $args eq '' ? '' : " $args" ]}\E$/m,
         '-V prints the configure arguments');
}
like($v, qr/^modules: (?:.* )?readconn(?: .*)?$/m, '-V lists readconn');

# --- starting on a broken configuration ----------------------------------

$t->write_file_expand('broken.conf', <<'EOF');
%%TEST_GLOBALS%%
mysql {
    user app { password "secret"; }
    upstream cluster { server 127.0.0.1:3306 role=primary; }
    server {
        listen 127.0.0.1:%%PORT_1%%;
        router readconn;
        upstream cluster;
        readconn_role primray;
    }
}
EOF
my @lines = split /\n/, $t->read_file('broken.conf');
my ($line) = map { $_ + 1 } grep { $lines[$_] =~ /primray/ } 0 .. $#lines;
ok(!$t->run(conf => 'broken.conf', may_fail => 1),
   'sluice does not start on a broken config');
like($t->run_error // '', qr/exited with status 1\b/, 'and exits with 1')
    or diag($t->run_error);
my $emerg = "sluice: [emerg] $dir/broken.conf:$line: invalid value "
          . '"primray" in "readconn_role" directive';
like($t->read_file('stderr.log') // '', qr/^\Q$emerg\E/m,
     'the error on stderr names broken.conf and the line');
ok(!-e "$dir/sluice.pid", 'and leaves no pid file');
