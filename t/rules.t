#!/usr/bin/perl

# Query rules (issue 23, section 4): `rule NAME { match_*; action; }` in a
# server {} block, compiled once per cycle with pcre2 (JIT), tried in
# order, first match wins unless `continue`.  Every action through real
# servers: route primary, replica and server=NAME (readwritesplit; a
# write routed to a replica is refused: it runs on the primary, counted
# and logged), block (default and own message and code; on a prepared
# statement too), rewrite (the router sees the rewritten statement: a
# SELECT rewritten into an INSERT goes to the primary; one that no longer
# fits a buffer is refused with an ERR and nothing runs), cache_ttl and
# no_cache with the cache filter, continue; match_user and match_db on
# readconn; a rule that matches nothing; hostile patterns bounded by
# rule_match_limit (a rule that blocks fails closed, one that routes
# fails open); per-rule counters in /metrics, kept by name across a
# reload; configuration errors with file:line (and the regex's offset).

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session read_result);

my $t = Sluice::Test->new;
$t->has('status', 'admin', 'readconn', 'readwritesplit', 'cache');

my $p = $t->primary_dbh;
$p->do('CREATE OR REPLACE TABLE rl_w (id INT)');
$p->do('CREATE OR REPLACE TABLE rl_c (id INT PRIMARY KEY, v INT)');
$p->do('INSERT INTO rl_c VALUES (1, 10), (2, 20)');
$p->do('CREATE OR REPLACE TABLE secret (id INT)');
$p->do("CREATE OR REPLACE USER 'other'\@'%' IDENTIFIED BY 'secret'");
$p->do("GRANT ALL ON test.* TO 'other'\@'%'");
my $r = $t->replica_dbh;
wait_for(sub { $r->selectrow_array('SELECT COUNT(*) FROM rl_c') == 2 },
         what => 'the tables on the replica');
my $pid = $p->selectrow_array('SELECT @@server_id');
my $rid = $r->selectrow_array('SELECT @@server_id');

my $long = 'x' x 3000;
my $dir = $t->testdir;
$t->write_file_expand('sluice.conf', <<"EOF");
worker_processes 1;
admin_socket $dir/admin.sock;
status_listen 127.0.0.1:%%PORT_2%%;
events { worker_connections 100; }
mysql {
    buffer_size 16k;
    user app { password "secret"; }
    user other { password "secret"; }
    cache_zone rules size=4m;
    upstream pair {
        server %%PRIMARY%% role=primary;
        server %%REPLICA%% role=replica;
        monitor_user monitor; monitor_password "monitor";
    }
    server {
        listen 127.0.0.1:%%PORT_0%%; router readwritesplit; upstream pair;
        filters cache; cache rules; cache_ttl 0;
        rule_match_limit 1000;
        rule every_app { match_user "^app\$"; continue; }
        rule hostile_block { match_text "^SELECT '(x+x+)+[yz]"; block; }
        rule hostile_route { match_text "^SELECT '(z+z+)+[yx]"; route primary; }
        rule no_drop { match_digest "^drop table "; block; }
        rule deny_secret {
            match_table "^test\\.secret\$";
            block "secret is off limits" 1142;
        }
        rule to_primary { match_text "/\\* to-primary \\*/"; route primary; }
        rule to_replica {
            match_text "^SELECT \@\@server_id AS r";
            route replica;
        }
        rule to_server {
            match_text "^SELECT \@\@server_id AS s";
            route server=%%REPLICA%%;
        }
        rule write_to_replica { match_text "^INSERT INTO rl_w"; route replica; }
        rule shout {
            match_text "^SELECT 'lower'";
            rewrite "SELECT UPPER('lower') AS v";
        }
        rule make_write {
            match_text "^SELECT 'make-a-write', (\\d+)";
            rewrite "INSERT INTO rl_w VALUES (\$1)";
        }
        rule grow {
            match_text "^SELECT 'grow', '(x+)'";
            rewrite "SELECT '\$1\$1\$1\$1\$1\$1'";
        }
        rule nocache { match_text "FROM rl_c WHERE id = 2"; no_cache; }
        rule cached { match_table "^test\\.rl_c\$"; cache_ttl 30s; }
        rule nothing { match_text "^this matches no statement"; block; }
    }
    server {
        listen 127.0.0.1:%%PORT_1%%; router readconn; upstream pair;
        readconn_role primary;
        rule other_in_test {
            match_user "^other\$"; match_db "^test\$";
            block "other may not use test";
        }
        rule longer {
            match_text "^SELECT 'g'\$";
            rewrite "SELECT 'grown longer'";
        }
        rule shrink {
            match_text "^SELECT 'shrink me, please'\$";
            rewrite "SELECT 's'";
        }
        rule one_to_two {
            match_text "^SELECT 1 AS (\\w+)\$";
            rewrite "SELECT 2 AS \$1";
        }
    }
}
EOF
$t->run;
$t->plan(40);

sub admin { $t->admin_say('admin.sock', @_) }
sub metrics { $t->http_body($t->port(2), '/metrics') }
sub counter {
    my ($name, $rule, $port) = @_;
    my $l = '127.0.0.1:' . $t->port($port // 0);
    return metrics() =~ /^\Q$name\E\{listener="\Q$l\E",rule="\Q$rule\E"\}
                          \s(\d+)$/mx ? $1 : -1;
}

my $d = $t->dbh or BAIL_OUT("no session: $DBI::errstr");

# --- route -----------------------------------------------------------------
is($d->selectrow_array('SELECT @@server_id AS x'), $rid,
   'a read no rule routes goes to the replica');
is($d->selectrow_array('/* to-primary */ SELECT @@server_id AS x'), $pid,
   'route primary: the read goes to the primary');
is($d->selectrow_array('SELECT @@server_id AS r'), $rid,
   'route replica: to the replica');
is($d->selectrow_array('SELECT @@server_id AS s'), $rid,
   'route server=NAME: to the server it names');

like(admin("server pair/" . $t->replica . " drain"), qr/-> drain/,
     'the replica drained');
is($d->selectrow_array('SELECT @@server_id AS s'), $pid,
   'route server=NAME, its server drained: the read goes elsewhere '
   . '(the primary)');
is(counter('sluice_rule_refused_total', 'to_server'), 1,
   '... counted as refused');
like(admin("server pair/" . $t->replica . " enable"), qr/-> ready/,
     'the replica enabled again');

ok($d->do('INSERT INTO rl_w VALUES (1)'), 'a write a rule routes to a '
   . 'replica runs');
is($p->selectrow_array('SELECT COUNT(*) FROM rl_w WHERE id = 1'), 1,
   '... on the primary: the router refused the route');
is(counter('sluice_rule_refused_total', 'write_to_replica'), 1,
   '... counted as refused');
ok(wait_for(sub { $t->error_log =~ /rule "write_to_replica" not followed/ },
            what => 'the refusal in the log'), '... and logged');

# --- block -----------------------------------------------------------------
ok(!$d->do('DROP TABLE nonexistent_table'), 'block: refused');
is($d->err, 1148, '... with ERR 1148 by default') or diag $d->errstr;
like($d->errstr, qr/blocked by rule "no_drop"/, '... naming the rule');
ok(!$d->selectrow_array('SELECT * FROM secret'), 'block "MESSAGE" CODE');
is($d->err . ' ' . $d->errstr, '1142 secret is off limits',
   '... answers its code and message');
my $ps = $t->dbh(mariadb_server_prepare => 1);
ok(!$ps->prepare('DROP TABLE nonexistent_table'),
   'block: a prepared statement is refused at PREPARE');
is($d->selectrow_array('SELECT 1'), 1, 'the session goes on after a block');

# --- rewrite ---------------------------------------------------------------
is($d->selectrow_array("SELECT 'lower'"), 'LOWER',
   'rewrite: the server ran the rewritten statement');
ok(defined $d->do("SELECT 'make-a-write', 42"),
   'a SELECT rewritten into an INSERT runs');
is($p->selectrow_array('SELECT COUNT(*) FROM rl_w WHERE id = 42'), 1,
   '... on the primary: the router saw the INSERT');
ok(!$d->selectrow_array("SELECT 'grow', '$long'"),
   'a rewrite that does not fit a buffer is refused');
like($d->errstr, qr/rewrite by a rule does not fit/, '... with a clear ERR');

# --- cache actions ---------------------------------------------------------
$d->selectrow_array('SELECT v FROM rl_c WHERE id = 1') for 1 .. 2;
$d->selectrow_array('SELECT v FROM rl_c WHERE id = 2') for 1 .. 2;
$p->do('UPDATE rl_c SET v = v + 1');        # behind the proxy's back
wait_for(sub { $r->selectrow_array('SELECT v FROM rl_c WHERE id = 2') == 21 },
         what => 'the update on the replica');
is($d->selectrow_array('SELECT v FROM rl_c WHERE id = 1'), 10,
   'cache_ttl: the entry is served for its ttl (cache_ttl 0 elsewhere)');
is($d->selectrow_array('SELECT v FROM rl_c WHERE id = 2'), 21,
   'no_cache, before it: never cached');
like(admin('cache flush rule cached'), qr/^flushed: 1 zone/m,
     'cache flush rule NAME');
is($d->selectrow_array('SELECT v FROM rl_c WHERE id = 1'), 11,
   '... made the entries stored under the rule stale');
like(admin('cache flush rule'), qr/^error: usage: cache flush .*rule NAME/m,
     '... and needs the name');

# --- hostile patterns ------------------------------------------------------
my $x = 'x' x 40;
ok(!$d->selectrow_array("SELECT '$x'"),
   'a block rule whose match hits the limit fails closed');
my $z = 'z' x 40;
is($d->selectrow_array("SELECT '$z'"), $z,
   'a route rule whose match hits the limit fails open');
ok(counter('sluice_rule_match_failures_total', 'hostile_block') == 1
   && counter('sluice_rule_match_failures_total', 'hostile_route') == 1,
   '... each counted as a match failure');

# --- counters, continue, nothing --------------------------------------------
my $every = counter('sluice_rule_matches_total', 'every_app');
cmp_ok($every, '>=', 15, 'continue: every statement of app matched the '
       . 'first rule, and the next rules still decided');
is(counter('sluice_rule_matches_total', 'nothing'), 0,
   'a rule that matches nothing counts nothing');
{
    # (no skip: contrib/deps.sh installs prometheus, and a missing
    # promtool fails the check)
    open(my $fh, '|-', "promtool check metrics > $dir/promtool.out 2>&1")
        or die "promtool: $!";
    print {$fh} metrics();
    close($fh);
    is($? >> 8, 0, 'promtool check metrics: the rules\' families too')
        or diag($t->read_file('promtool.out'));
}

# --- readconn: match_user, match_db, rewrite ------------------------------
# (DBD::MariaDB sends a statement as it connects: that one is refused)
my $o = $t->dbh(port => $t->port(1), user => 'other');
ok(!$o && $DBI::errstr =~ /other may not use test/,
   'match_user and match_db: other in test is blocked (readconn)');
my $a = $t->dbh(port => $t->port(1));
is($a->selectrow_array('SELECT 1 AS n'), 2,
   'readconn: a rewrite, and app in test is not blocked');

# --- rewrites in a pipeline: the commands behind move along -----------------
my $raw = raw_session($t->port(1));
my $pipe = join '', map { substr(pack('V', 1 + length), 0, 3) . "\0\x03$_" }
    "SELECT 'g'", "SELECT 1 AS n", "SELECT 'shrink me, please'", 'SELECT 3';
syswrite($raw->{sock}, $pipe) if $raw;
my @got = map { my $r = $raw ? read_result($raw->{sock}) : undef;
                $r && $r->{rows} ? $r->{rows}[0][0] : 'none' } 1 .. 4;
is("@got", 'grown longer 2 s 3', 'four pipelined statements, three '
   . 'rewritten (longer, the same length, shorter): each answered in turn');

# --- a reload keeps the counters by name ------------------------------------
$t->reload;
cmp_ok(counter('sluice_rule_matches_total', 'every_app'), '>=', $every,
       'a reload keeps each rule\'s counters');

# --- configuration errors, with file:line -----------------------------------
my @bad = (
    [ 'rule_match_limit 1000;', 'rule r1 { match_text "a(b"; block; }',
      qr/rule "r1": match_text: bad regex at offset 3: missing closing/ ],
    [ 'rule_match_limit 1000;', 'rule r2 { route server=10.9.9.9:1; }',
      qr/rule "r2": no server "10\.9\.9\.9:1" in upstream "pair"/ ],
    [ 'rule_match_limit 1000;', 'rule r3 { rewrite "x"; }',
      qr/rule "r3": rewrite needs match_text/ ],
    [ 'rule_match_limit 1000;', 'rule r4 { block; route primary; }',
      qr/rule "r4": block takes no other action/ ],
    [ 'rule_match_limit 1000;', 'rule r5 { route sideways; }',
      qr/route takes primary, replica or server=NAME/ ],
    [ 'rule_match_limit 1000;', 'rule every_app { block; }',
      qr/rule "every_app": duplicate name/ ],
    [ 'rule_match_limit 1000;', 'rule r6 { cache_ttl 10s; no_cache; }',
      qr/no_cache takes no other cache action/ ],
    [ 'rule_match_limit 1000;', 'rule_match_limit 5;',
      qr/"rule_match_limit" takes a number from 100/ ],
    [ 'readconn_role primary;', 'readconn_role primary; '
      . 'rule r7 { route replica; }',
      qr/rule "r7": route needs a router that routes each statement/ ],
    [ 'rule_match_limit 1000;', 'rule r8 { match_text "x"; frobnicate; }',
      qr/unknown directive "frobnicate"/ ],
);
my @wrong;
for my $b (@bad) {
    (my $c = $t->read_file('sluice.conf')) =~ s/\Q$b->[0]\E/$b->[1]/;
    $t->write_file('bad.conf', $c);
    my ($brc, $bout) = $t->test_config(conf => 'bad.conf');
    push @wrong, "$b->[1]: $bout" unless $brc != 0
        && $bout =~ /bad\.conf:\d+: / && $bout =~ $b->[2];
}
is("@wrong", '', 'bad rules: configuration errors with file:line');
