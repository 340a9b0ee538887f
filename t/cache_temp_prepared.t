#!/usr/bin/perl

# Regression: a temporary table created through COM_STMT_PREPARE (the
# binary protocol) was invisible to the cache.  A temporary table
# shadows the real table of its name for its session alone, so the cache
# must neither keep that session's reads of the name for others nor
# serve it others' entries; it knew that of a text CREATE TEMPORARY
# TABLE only.  Session A prepared and executed `CREATE TEMPORARY TABLE
# tmpx`, inserted 99 and read it: that 99 was kept under the real
# table's key and served to session B, whose tmpx holds 1; and the other
# way round A was served B's 1.  What must hold, for each way a
# temporary table can be made (binary prepare and execute, text PREPARE
# and EXECUTE, EXECUTE IMMEDIATE, a procedure's CALL): the session with
# the temporary table reads its own rows (99), the others the real
# table's (1), whichever read first.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;
use Sluice::Wire qw(raw_session query send_packet read_response
                    stmt_prepare stmt_execute);

my $t = Sluice::Test->new;
$t->has('cache');

my $p = $t->primary_dbh;
my $tmp = $t->name . '_x';
my $proc = $t->name . '_p';
$p->do("CREATE OR REPLACE TABLE test.$tmp (a INT)");
$p->do("INSERT INTO test.$tmp VALUES (1)");
$p->do("CREATE OR REPLACE PROCEDURE test.$proc() "
       . "BEGIN CREATE TEMPORARY TABLE $tmp (a INT); END");
END { eval { my $d = $t->primary_dbh;
             $d->do("DROP PROCEDURE IF EXISTS test.$proc");
             $d->do("DROP TABLE IF EXISTS test.$tmp") } if $t }

$t->write_file_expand('sluice.conf', <<'EOF');
worker_processes 1;
events { worker_connections 100; }
mysql {
    user app { password "secret"; }
    cache_zone qc size=8m;
    upstream cluster {
        monitor_user monitor;
        monitor_password "monitor";
        server %%PRIMARY%% role=primary;
    }
    server {
        listen 127.0.0.1:%%PORT_0%%;
        router readconn;
        upstream cluster;
        filters cache;
        cache qc;
        cache_ttl 60s;
    }
}
EOF
$t->run;
$t->plan(4 * 7);

sub session { raw_session($t->port(0), db => 'test')->{sock} }

sub col0 {
    my ($r) = @_;
    return $r && $r->{rows} && @{ $r->{rows} } ? $r->{rows}[0][0] : undef;
}

my $create = "CREATE TEMPORARY TABLE $tmp (a INT)";
my %how = (
    '1 binary prepare' => sub {
        my ($s) = @_;
        my ($id) = stmt_prepare($s, $create) or return 0;
        send_packet($s, 0, stmt_execute(id => $id));
        my $r = read_response($s);
        return defined $r && ord(substr($r, 4)) == 0;
    },
    '2 text PREPARE' => sub {
        my ($s) = @_;
        return query($s, "PREPARE s FROM '$create'")->{ok}
            && query($s, 'EXECUTE s')->{ok};
    },
    '3 EXECUTE IMMEDIATE' => sub {
        my ($s) = @_;
        return query($s, "EXECUTE IMMEDIATE '$create'")->{ok};
    },
    '4 CALL' => sub {
        my ($s) = @_;
        return query($s, "CALL $proc()")->{ok};
    },
);

my $n = 0;
for my $name (sort keys %how) {
    (my $label = $name) =~ s/^\d //;
    my $make = sub {
        my $s = session();
        ok($how{$name}->($s) && query($s, "INSERT INTO $tmp VALUES (99)")
           ->{ok}, "$label: session A creates a temporary $tmp and "
           . 'inserts 99');
        return $s;
    };
    # A reads first, then B
    $n++;
    my $q = "SELECT a FROM $tmp WHERE $n = $n";
    my $a = $make->();
    is(col0(query($a, $q)), 99, "$label: A reads its temporary table: 99");
    my $b = session();
    is(col0(query($b, $q)), 1, "$label: then session B reads the real "
       . 'table: 1');
    # B reads first, then A
    $n++;
    $q = "SELECT a FROM $tmp WHERE $n = $n";
    $a = $make->();
    is(col0(query($b, $q)), 1, "$label: B reads first: 1");
    is(col0(query($a, $q)), 99, "$label: then A: 99");
    is(col0(query($b, $q)), 1, "$label: and B again: 1");
    close $_ for $a, $b;
}
