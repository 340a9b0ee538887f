#!/usr/bin/perl

# Query digests (issue 23, section 3): `digests on [user] [db];` keeps per
# statement digest (literals as ?, IN lists and VALUES rows folded,
# comments and case folded) the count, errors, mean, longest and p99
# time, through readconn and readwritesplit; the admin socket's show
# digests and digests reset; the top `digest_metrics` in /metrics.
# Bounded by construction: `digest_top` entries per worker, sized at
# configuration time (sluice -t prints the zone), space-saving keeps the
# most counted; a flood of distinct statements leaves the worker's RSS,
# the zone and the scrape's size as they were, and counts what fell out.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use JSON::PP ();
use Sluice::Test;

my $t = Sluice::Test->new;
$t->has('admin', 'status', 'readconn', 'readwritesplit');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE dg (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO dg VALUES (1, 10), (2, 20), (3, 30)');
my $r = $t->replica_dbh;
wait_for(sub { $r->selectrow_array('SELECT COUNT(*) FROM dg') == 3 },
         what => 'the table on the replica');

my $dir = $t->testdir;
$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 2;
admin_socket $dir/admin.sock;
status_listen 127.0.0.1:%%PORT_3%%;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    user other { password "secret"; }
    digest_top 50;
    digest_metrics 3;
    upstream pair {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
    }
    server { listen 127.0.0.1:%%PORT_0%%; router readconn; upstream pair;
             readconn_role primary; digests on; }
    server { listen 127.0.0.1:%%PORT_1%%; router readwritesplit;
             upstream pair; digests on user; }
    server { listen 127.0.0.1:%%PORT_2%%; router readconn; upstream pair;
             readconn_role primary; }
}
EOF
$p->do("CREATE OR REPLACE USER 'other'\@'%' IDENTIFIED BY 'secret'");
$p->do("GRANT ALL ON test.* TO 'other'\@'%'");
$t->run;
$t->plan(27);

sub admin { $t->admin_say('admin.sock', @_) }
sub metrics { $t->http_body($t->port(3), '/metrics') }
# show digests' row of a digest text:
# [count, errors, rows, mean, max, p99, user, db, text]
sub row {
    my ($show, $text) = @_;
    for (split /\n/, $show) {
        my @f = split / /, $_, 9;
        return \@f if @f == 9 && $f[8] eq $text;
    }
    return undef;
}

my ($rc, $out) = $t->test_config;
like($out, qr/^sluice: shared memory zone mysql_digests: (\d+) bytes/m,
     'sluice -t prints the digests\' zone');
my ($zone) = $out =~ /zone mysql_digests: (\d+) bytes/;

# --- readconn ----------------------------------------------------------------

my $d = $t->dbh(port => $t->port(0));
$d->selectrow_array("SELECT v FROM dg WHERE id = $_") for 1 .. 3;
$d->selectrow_array("select  v FROM dg where id=$_ /* c */") for 1 .. 2;
$d->selectall_arrayref('SELECT v FROM dg WHERE id IN (1, 2)');
$d->selectall_arrayref('SELECT v FROM dg WHERE id IN (3)');
ok(!defined eval { $d->do('SELECT nope FROM dg WHERE id = 1') },
   'a statement the server refuses');
my $show;
ok(wait_for(sub { $show = admin('show digests');
                  (row($show, 'select v from dg where id = ?') // [0])->[0]
                  == 5 }, what => 'the digest'),
   'five statements that differ in literals, keywords\' case, blanks and '
   . 'comments: one digest counted 5');
my $in = row($show, 'select v from dg where id in (...)');
is($in->[0], 2, 'IN lists of any length: one digest');
is($in->[2], 3, '... and the rows their answers had (2 + 1)');
my $bad = row($show, 'select nope from dg where id = ?');
ok($bad && $bad->[0] == 1 && $bad->[1] == 1, 'the refused one: its error');
my $row = row($show, 'select v from dg where id = ?');
ok($row->[3] > 0 && $row->[4] >= $row->[3] && $row->[5] =~ /^[\d.e+-]+$/,
   'mean, longest and the p99 bound in ms');
is($row->[2], 5, 'rows: one per run');
is($row->[6], '-', 'not kept apart by user there');
my $sp = $t->dbh(port => $t->port(0), mariadb_server_prepare => 1);
my $sth = $sp->prepare('SELECT v, id FROM dg WHERE id = ?');
$sth->execute($_) && $sth->fetchall_arrayref for 1 .. 3;
my $ps;
ok(wait_for(sub { $ps = row(admin('show digests'),
                            'select v, id from dg where id = ?');
                  $ps && $ps->[0] == 3 }, what => 'the prepared one'),
   'COM_STMT_EXECUTE: each execute counted under its statement\'s digest')
    or diag(admin('show digests'));
is($ps->[2], 3, '... with its rows');
my $plain = $t->dbh(port => $t->port(2));
$plain->selectrow_array('SELECT v FROM dg WHERE id = 1') for 1 .. 3;
is(row(admin('show digests'), 'select v from dg where id = ?')->[0], 5,
   'a server block without digests adds nothing');

# --- readwritesplit, by user -----------------------------------------------

my $w = $t->dbh(port => $t->port(1));
my $o = $t->dbh(port => $t->port(1), user => 'other');
$w->selectrow_array('SELECT v FROM dg WHERE id = 2') for 1 .. 2;
$o->selectrow_array('SELECT v FROM dg WHERE id = 3') for 1 .. 3;
$show = admin('show digests 100');
my @by_user = grep { /^\d+ \d+ \d+ \S+ \S+ \S+ (app|other) - select v from dg /
                   } split /\n/, $show;
is(scalar(@by_user), 2, 'digests on user: a row per user')
    or diag($show);
ok((grep { /^2 .* app / } @by_user) && (grep { /^3 .* other / } @by_user),
   '... each with its own count');

# --- metrics ------------------------------------------------------------------

my $m = metrics();
my @calls = $m =~ /^sluice_digest_calls_total\{/mg;
is(scalar(@calls), 3, 'digest_metrics 3: the top 3 in /metrics');
my $lab = 'user="",db="",text="select v from dg where id = ?"';
like($m, qr/^sluice_digest_calls_total\{digest="[0-9a-f]{16}",\Q$lab\E\} 5$/m,
     '... labelled by digest and text');
like($m, qr/^sluice_digests_evicted_total 0$/m, 'nothing fell out yet');
my $js = eval { JSON::PP::decode_json($t->http_body($t->port(3),
                                                    '/status')) } // {};
my ($top) = grep { $_->{text} eq 'select v from dg where id = ?'
                   && $_->{user} eq '' } @{ $js->{digests}{top} // [] };
ok($top && $top->{count} == 5 && $top->{errors} == 0 && $top->{seconds} > 0,
   'GET /status: the top digests, with their counts and times')
    or diag(JSON::PP->new->canonical->encode($js->{digests} // {}));

# --- bounded: a flood of distinct statements ---------------------------------

my @workers = $t->worker_pids;
my $rss0 = 0;
$rss0 += $t->rss_kb($_) for @workers;
my $size0 = length metrics();
my $n = $ENV{SLUICE_DIGEST_FLOOD} // 1_000_000;
my ($frc, undef, $ferr) = $t->mysql_cli(port => $t->port(0),
    stdin => join('', map { "SELECT 1 AS c$_;\n" } 1 .. $n),
    timeout => 900);
is($frc, 0, "$n distinct statements through readconn") or diag($ferr);
$show = admin('show digests 1000');
my ($kept, $fell) = $show =~ /^# (\d+) digests, (\d+) fell out$/m;
ok($kept <= 2 * 50 + 10, "at most digest_top per worker kept ($kept)");
cmp_ok($fell, '>=', $n - 2 * 50, 'the rest fell out, counted');
my $rss1 = 0;
$rss1 += $t->rss_kb($_) for @workers;
cmp_ok($rss1 - $rss0, '<', 8 * 1024,
       "the workers' RSS did not grow with them ($rss0 -> $rss1 KiB)");
($rc, $out) = $t->test_config;
my ($zone1) = $out =~ /zone mysql_digests: (\d+) bytes/;
is($zone1, $zone, 'the zone is the size configured');
cmp_ok(abs(length(metrics()) - $size0), '<', 2048,
       'the scrape is the size it was');
like(admin('digests reset'), qr/^digests: reset/m, 'digests reset');
like(admin('show digests 5x'), qr/^error: usage: show digests \[N\]/m,
     'show digests with a count that is not one: an error');

my @bad = (
    [ 'digest_top 5;', qr/invalid digest_top "5" \(10 to 100000\)/ ],
    [ 'digest_metrics 2000;', qr/invalid digest_metrics "2000"/ ],
    [ 'digests maybe;', qr/invalid "digests" \(off, or on/ ],
    [ 'digests on user host;', qr/invalid "digests" option "host"/ ],
    [ 'digests on; digests off;', qr/"digests" is duplicate/ ],
);
my @wrong;
for my $b (@bad) {
    (my $c = $t->read_file('sluice.conf')) =~ s/digest_top 50;/$b->[0]/;
    $t->write_file('bad.conf', $c);
    my ($brc, $bout) = $t->test_config(conf => 'bad.conf');
    push @wrong, "$b->[0]: $bout" unless $brc != 0
        && $bout =~ /bad\.conf:\d+: / && $bout =~ $b->[1];
}
is("@wrong", '', 'bad digest directives: errors with file:line');
