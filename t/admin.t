#!/usr/bin/perl

# The admin socket (issue 23, section 2): unix sockets with a level each
# (read, operator, admin) and their mode from the start; a line a command,
# each answer ending with an empty line; a read socket refuses what
# changes, an operator one kill.  show servers, show sessions; server
# NAME drain (no new sessions there, readwritesplit reads go elsewhere,
# sessions there go on), disable (and its sessions close at rest), enable;
# kill session ID; cache flush.  Every change is logged with the peer's
# uid and lasts until the next reload, which says so.  Hostile lines:
# unknown commands, too many words, a line too long.  Bad directives are
# errors with file:line.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use IO::Socket::UNIX;
use IO::Socket::INET;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('admin', 'status', 'readconn', 'readwritesplit', 'cache');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE admin_t (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO admin_t VALUES (1, 10)');
my $r = $t->replica_dbh;
wait_for(sub { $r->selectrow_array('SELECT COUNT(*) FROM admin_t') == 1 },
         what => 'the table on the replica');
my $pid = $p->selectrow_array('SELECT @@server_id');
my $rid = $r->selectrow_array('SELECT @@server_id');

my $dir = $t->testdir;
$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
admin_socket $dir/admin.sock;
admin_socket $dir/read.sock level=read;
admin_socket $dir/oper.sock level=operator mode=0660;
status_listen 127.0.0.1:%%PORT_3%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream pair {
        monitor_user monitor; monitor_password "monitor";
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn;
             readconn_role any; upstream pair; }
    server { listen 127.0.0.1:%%PORT_1%%; router readwritesplit;
             upstream pair; }
    server { listen 127.0.0.1:%%PORT_2%%; router readconn; upstream pair;
             filters cache; cache qc; cache_ttl 60s; }
}
EOF
$t->run;
$t->plan(53);

# One connection, lines in, the answers (each up to its empty line) out.
sub admin {
    my ($sock, @lines) = @_;
    my $s = IO::Socket::UNIX->new(Peer => "$dir/$sock") or return undef;
    print {$s} map { "$_\n" } @lines;
    shutdown($s, 1);
    local $/;
    return <$s> // '';
}
sub answer { my $a = admin($_[0], $_[1]); $a =~ s/\n\n\z/\n/; return $a }
sub metrics {
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1:' . $t->port(3))
        or return '';
    print {$s} "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    local $/;
    return <$s> // '';
}
my $replica = 'pair/' . $t->replica;

ok(wait_for(sub { -S "$dir/admin.sock" && -S "$dir/oper.sock" },
            what => 'the admin sockets'), 'the admin process listens');
is(sprintf('%04o', (stat "$dir/admin.sock")[2] & 07777), '0600',
   'an admin socket is 0600 by default');
is(sprintf('%04o', (stat "$dir/oper.sock")[2] & 07777), '0660',
   '... or its mode=');

# --- the line protocol ----------------------------------------------------

my $help = answer('read.sock', 'help');
like($help, qr/^show servers  /m, 'help on a read socket: show servers');
unlike($help, qr/^(?:server|kill session|cache flush) /m,
       '... and none of the commands above its level');
like(answer('admin.sock', 'help'), qr/^kill session ID  /m,
     'help on an admin socket: kill session');
like(answer('read.sock', "no such thing\x1b[2J"),
     qr/^error: unknown command "no" \(help lists them\)$/m,
     'an unknown command: an error');
like(answer('read.sock', 'a b c d e f g h i'),
     qr/^error: more than 8 words$/m, 'too many words: an error');
my $long = admin('read.sock', 'show ' . ('x' x 2000), 'show servers');
like($long, qr/\Aerror: a line is at most 1023 bytes\n\n\z/,
     'a line too long: an error, and the connection ends there');
my $two = admin('read.sock', 'show servers', '', 'show servers');
is(() = $two =~ /^# server role state admin/mg, 2,
   'two commands on one connection, two answers');

# 16 connections at once: the 17th is closed unanswered, and logged
my @held = map { IO::Socket::UNIX->new(Peer => "$dir/read.sock") } 1 .. 16;
ok(wait_for(sub { $t->grep_log(qr/admin: a connection to \S+ refused/)
                  || do { my $x = IO::Socket::UNIX->new(
                              Peer => "$dir/read.sock");
                          0 } },
            what => 'the refusal'), 'past 16 connections: refused, logged');
$t->allow_log(qr/admin: a connection to \S+ refused/);
is(admin('read.sock', 'show servers') =~ /^# server/m ? 1 : 0, 0,
   '... and not answered');
close $_ for @held;
ok(wait_for(sub { answer('read.sock', 'show servers') =~ /^# server/m },
            what => 'an answer'), 'answered again once they closed');

# --- show servers, drain ----------------------------------------------------

ok(wait_for(sub { answer('read.sock', 'show servers')
                  =~ m{^\Q$replica\E replica up ready }m },
            what => 'the monitor\'s check'),
   'show servers: the replica, its role, state and admin state');
like(answer('read.sock', "server $replica drain"),
     qr/^error: "server" needs the operator level, this socket has read$/m,
     'a read socket refuses server');
like(answer('oper.sock', "server $replica drain"),
     qr/^server \Q$replica\E: ready -> drain$/m, 'server NAME drain');
ok($t->grep_log(qr/admin: uid $< on \Q$dir\E\/oper\.sock: server "\Q$replica\E" ready -> drain \(until the next reload\)/),
   'the change is logged with the peer\'s uid');
like(answer('read.sock', 'show servers'),
     qr/^\Q$replica\E replica up drain /m, '... show servers says drain');
my $rs = 'upstream="pair",server="' . $t->replica . '",state="drain"';
like(metrics(), qr/^sluice_server_admin_state\{\Q$rs\E\} 1$/m,
     '... and so does the metric');
my @ids = map { my $d = $t->dbh(port => $t->port(0));
                $d->selectrow_array('SELECT @@server_id') } 1 .. 12;
is(scalar(grep { $_ != $pid } @ids), 0,
   'drained: new readconn sessions all go to the primary');
my $w = $t->dbh(port => $t->port(1));
my @reads = map { $w->selectrow_array('SELECT @@server_id') } 1 .. 4;
is(scalar(grep { $_ != $pid } @reads), 0,
   'drained: readwritesplit sends its reads to the primary');
like(answer('oper.sock', "server $replica enable"),
     qr/^server \Q$replica\E: drain -> ready$/m, 'server NAME enable');
ok(wait_for(sub { $w->selectrow_array('SELECT @@server_id') == $rid },
            what => 'a read on the replica'),
   'enabled: reads go to the replica again');
like(answer('oper.sock', 'server 10.9.9.9:1 drain'),
     qr/^error: no server "10\.9\.9\.9:1" \(show servers\)$/m,
     'an unknown server: an error');

# --- disable: sessions there close at rest ---------------------------------

my ($in_trx, $idle) = grep { $_->selectrow_array('SELECT @@server_id') == $rid }
                      map { $t->dbh(port => $t->port(0)) } 1 .. 24;
ok($in_trx && $idle, 'two readconn sessions on the replica');
$in_trx->do('BEGIN');
$in_trx->selectrow_array('SELECT v FROM admin_t WHERE id = 1');
my $ro = $t->dbh(port => $t->port(1));
$ro->do('START TRANSACTION READ ONLY');
is($ro->selectrow_array('SELECT @@server_id'), $rid,
   'a READ ONLY transaction of readwritesplit\'s on the replica');
like(answer('oper.sock', "server $replica disable"),
     qr/: ready -> maintenance$/m, 'server NAME disable');
$t->allow_log(qr/maintenance/);
ok(wait_for(sub { !defined eval { $idle->selectrow_array('SELECT 1') } },
            what => 'the idle session closed'),
   'the idle session on the server in maintenance is closed');
ok(defined eval { $in_trx->selectrow_array('SELECT 1') },
   'the session in a transaction is not cut');
$in_trx->do('COMMIT');
ok(wait_for(sub { !defined eval { $in_trx->selectrow_array('SELECT 1') } },
            what => 'the session closed'),
   '... and is closed once its transaction ended');
is($ro->selectrow_array('SELECT @@server_id'), $rid,
   'readwritesplit keeps its replica backend while its READ ONLY '
   . 'transaction runs there');
$ro->do('COMMIT');
ok(wait_for(sub { answer('read.sock', 'show servers')
                  =~ /^\Q$replica\E replica up maintenance \S+ 0 /m },
            what => 'no connection left on the replica'),
   'readwritesplit closed its replica backend there at rest')
    or diag(answer('read.sock', 'show servers'));
is($w->selectrow_array('SELECT @@server_id'), $pid,
   '... and its session goes on, reading on the primary');
like(answer('admin.sock', "server $replica enable"),
     qr/maintenance -> ready/, 'enable again');

# --- sessions: show, kill -------------------------------------------------

my $victim = $t->dbh(port => $t->port(0));
my $vid = $victim->{mariadb_thread_id};
like(answer('read.sock', 'show sessions'),
     qr/^$vid \d+ app 127\.0\.0\.1 pair\/\S+ \d+ -$/m,
     'show sessions lists the session by the id its client saw, its user '
     . 'and address');
like(answer('read.sock', 'show sessions 0'), qr/^error: usage: show sessions/,
     'show sessions 0: an error');
like(answer('oper.sock', "kill session $vid"),
     qr/needs the admin level, this socket has operator/,
     'an operator socket refuses kill');
like(answer('admin.sock', 'kill session 12345'),
     qr/^error: no session 12345$/m, 'kill of no session: an error');
like(answer('admin.sock', "kill session $vid"),
     qr/^session $vid: marked/m, 'kill session ID');
$t->allow_log(qr/closed by an admin/);
ok(wait_for(sub { !defined eval { $victim->selectrow_array('SELECT 1') } },
            what => 'the killed session'), '... its worker closes it');
ok($t->grep_log(qr/admin: uid \d+ on \S+admin\.sock: kill session $vid/),
   '... logged');

# --- cache flush ------------------------------------------------------------

my $c = $t->dbh(port => $t->port(2));
sub misses {
    my ($m) = metrics() =~ /^sluice_cache_misses_total\{zone="qc"\} (\d+)$/m;
    return $m;
}
$c->selectrow_array('SELECT v FROM admin_t WHERE id = 1') for 1 .. 2;
my $m0 = misses();
ok(defined $m0, 'the zone\'s misses in the metrics');
$c->selectrow_array('SELECT v FROM admin_t WHERE id = 1');
is(misses(), $m0, 'a hit before the flush');
like(answer('oper.sock', 'cache flush table test.admin_t'),
     qr/^flushed: 1 zone$/m, 'cache flush table DB.TABLE');
$c->selectrow_array('SELECT v FROM admin_t WHERE id = 1');
is(misses(), $m0 + 1, '... the next lookup misses');
$c->selectrow_array('SELECT v FROM admin_t WHERE id = 1');
like(answer('oper.sock', 'cache flush zone qc'), qr/^flushed: 1 zone$/m,
     'cache flush zone NAME');
$c->selectrow_array('SELECT v FROM admin_t WHERE id = 1');
is(misses(), $m0 + 2, '... the next lookup misses');
like(answer('oper.sock', 'cache flush zone nope'),
     qr/^error: no cache zone "nope"$/m, 'an unknown zone: an error');
like(answer('read.sock', 'cache flush'), qr/needs the operator level/,
     'a read socket refuses cache flush');

# --- a reload ends the admin states ---------------------------------------

answer('oper.sock', "server $replica drain");
ok($t->reload, 'a reload');
ok(wait_for(sub { $t->grep_log(
                      qr/reload: server "\Q$replica\E" leaves its admin state drain/) },
            what => 'the reload\'s line'), 'the reload says it clears drain');
ok(wait_for(sub { answer('read.sock', 'show servers')
                  =~ m{^\Q$replica\E replica \w+ ready }m },
            what => 'ready again'), '... and the server is ready again');

# --- bad directives ---------------------------------------------------------

my @bad = (
    [ 'admin_socket admin.sock;', qr/an absolute path/ ],
    [ "admin_socket $dir/x.sock level=root;", qr/invalid admin_socket level/ ],
    [ "admin_socket $dir/x.sock mode=0400;", qr/invalid admin_socket mode/ ],
    [ "admin_socket $dir/x.sock user=no_such_user_here;",
      qr/unknown user "no_such_user_here"/ ],
    [ "admin_socket $dir/x.sock; admin_socket $dir/x.sock;",
      qr/duplicate admin_socket/ ],
);
my @wrong;
for my $b (@bad) {
    (my $c = $t->read_file('sluice.conf'))
        =~ s/admin_socket \Q$dir\E\/admin\.sock;/$b->[0]/;
    $t->write_file('bad.conf', $c);
    my ($rc, $out) = $t->test_config(conf => 'bad.conf');
    push @wrong, "$b->[0]: $out" unless $rc != 0
        && $out =~ /bad\.conf:\d+: / && $out =~ $b->[1];
}
is("@wrong", '', 'bad admin_socket directives: errors with file:line');
