#!/usr/bin/perl

# Sluice::Test's own switches, each seen from outside in the TAP and the
# stderr of a child test file run here: $t->has(MODULE) skips the whole
# file by itself when a module is not compiled in, and SLUICE_TEST_ERRLOG=1
# prints the end of sluice's logs when a file fails (bounded in lines and
# in bytes), and only then.  The children's failures are theirs: their
# output is captured, never part of this file's TAP.  Needs the sluice
# binary (for `sluice -V`), no MariaDB.

use strict;
use warnings;

use FindBin;
use lib "$FindBin::Bin/lib";

use Test::More;
use Sluice::Test;

my $t = Sluice::Test->new;
$t->plan(17);
my $dir = $t->testdir;

# A child test file: $code after the harness is loaded and $t made.  Its
# test directories go under ours (TMPDIR), and are removed with it.  Not
# named .t: `prove -r t/` would run it from a kept directory in t/tmp.
sub child {
    my ($name, $code, %env) = @_;
    $t->write_file("$name.pl", <<"EOF");
use strict;
use warnings;
use Test::More;
use Sluice::Test;
my \$t = Sluice::Test->new;
$code
EOF
    return $t->run_client(
        cmd => [ $^X, '-I', "$Sluice::Test::TOP/t/lib", "$dir/$name.pl" ],
        env => { TMPDIR => "$dir/tmp", SLUICE_TEST_KEEP => '', %env });
}

# The start of a child's output, enough to tell what went wrong.
sub head { substr($_[0] // '', 0, 4096) }

# --- has() ---------------------------------------------------------------

my ($rc, $out, $err) = child('skip', <<'EOF');
$t->has('no_such_module');
plan tests => 1;
ok(1, 'ran');
EOF
is($rc, 0, 'has() of a module not compiled in: the file exits 0')
    or diag(head($err));
like($out, qr/^1\.\.0 # SKIP no no_such_module module$/m,
     'it is skipped, naming the module') or diag($out);
unlike($out, qr/^ok/m, 'and runs none of its tests');

my @have = $t->modules;
($rc, $out, $err) = child('skip_second', <<"EOF");
\$t->has('@{[ $have[0] // 'readconn' ]}', 'testmissing');
plan tests => 1;
ok(1, 'ran');
EOF
like($out, qr/^1\.\.0 # SKIP no testmissing module$/m,
     'has() of several: the first missing one is named') or diag($out);

($rc, $out, $err) = child('too_late', <<'EOF');
plan tests => 1;
$t->has('no_such_module');
ok(1, 'ran');
EOF
like($err, qr/has\('no_such_module'\): the plan is set/,
     'has() after the plan dies rather than skip a planned file')
    or diag(head($err));

is($t->has(@have), 1, 'has() of the modules compiled in is true');

# --- SLUICE_TEST_ERRLOG --------------------------------------------------

# Two test directories, as a file with two Sluice::Test objects has: one
# whose log is long in lines, one whose log is long in bytes.  Then one
# test, failing unless the child is told to pass.
my $logs = <<'EOF';
$t->write_file('error.log', join '', map { "short line $_\n" } 1 .. 300);
$t->write_file('stderr.log', "what sluice printed\n");
my $t2 = Sluice::Test->new;
$t2->write_file('error.log',
                join '', map { "long line $_ " . 'x' x 1000 . "\n" } 1 .. 300);
plan tests => 1;
ok(!$ENV{FAIL}, 'fails when told to');
EOF

my %on = (SLUICE_TEST_ERRLOG => 1);
($rc, $out, $err) = child('errlog', $logs, %on, FAIL => 1);
is($rc, 1, 'a failing file under SLUICE_TEST_ERRLOG=1 fails')
    or diag(head($err));
like($out, qr/^not ok 1 - fails when told to$/m, 'as TAP says');

my $open = quotemeta "# SLUICE_TEST_ERRLOG: sluice's logs in ";
my $close = quotemeta "# --- end of sluice's logs in ";
my @dumps = $err =~ /^$open(\S+)\n(.*?)^$close\1$/msg;
is(@dumps, 4, 'it prints the logs of both test directories')
    or diag(head($err));
my %dump = @dumps;
my ($short) = grep { $dump{$_} =~ /short line/ } keys %dump;
my ($long) = grep { $dump{$_} =~ /long line/ } keys %dump;
like($short // '', qr/^\Q$dir\/tmp\/errlog_pl-\E/,
     'under the headers naming each directory');

my $s = $dump{ $short // '' } // '';
my $most = '(the last 200 lines, 65536 bytes at most):';
my $want = "# --- stderr.log $most\n#     what sluice printed\n"
    . "# --- error.log $most\n";
like($s, qr/^\Q$want\E/,
     'stderr.log and error.log, each with a header');
my @lines = $s =~ /^#     short line (\d+)$/mg;
is("@lines[0, -1]", '101 300', 'the last 200 lines of a log of short lines')
    or diag(head($s));

my $l = $dump{ $long // '' } // '';
@lines = $l =~ /^#     long line (\d+) x+$/mg;
my $bytes = 0;
$bytes += length("long line $_ ") + 1001 for @lines;
ok(@lines > 50 && $bytes <= 65536 && $lines[-1] == 300
   && $lines[0] == 301 - @lines,
   'the last 64 KiB of a log of long lines, whole lines only')
    or diag(scalar(@lines) . " lines, $bytes bytes, from "
            . ($lines[0] // '-'));

($rc, $out, $err) = child('errlog_off', $logs, SLUICE_TEST_ERRLOG => '',
                          FAIL => 1);
is($rc, 1, 'the same failure without the switch');
unlike($err, qr/SLUICE_TEST_ERRLOG|short line/,
       'prints no log') or diag(head($err));

($rc, $out, $err) = child('errlog_pass', $logs, %on, FAIL => '');
is($rc, 0, 'a passing file under the switch') or diag(head($err));
unlike($err, qr/SLUICE_TEST_ERRLOG|short line/,
       'prints no log either') or diag(head($err));
