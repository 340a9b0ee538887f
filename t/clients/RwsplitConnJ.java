// The MariaDB Connector/J client of t/rwsplit_connj.t, run as a single
// source file (java -cp mariadb-java-client.jar RwsplitConnJ.java ...).
//
//   RwsplitConnJ.java PORT TABLE ID MODE
//
// MODE "server" connects with useServerPrepStmts=true (COM_STMT_PREPARE and
// COM_STMT_EXECUTE), "client" without (the driver sends COM_QUERY).  Each
// step prints one line "MODE.STEP VALUE" or "MODE.STEP ERR message", so
// that the test sees how far it went; socketTimeout turns a hang into an
// error instead of a stuck test.

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

public class RwsplitConnJ {
    private static String mode;

    interface Step {
        String run() throws SQLException;
    }

    private static void step(String name, Step s) {
        String v;
        try {
            v = s.run();
        } catch (SQLException e) {
            v = "ERR " + e.getErrorCode() + " "
                + String.valueOf(e.getMessage()).replace('\n', ' ');
        }
        System.out.println(mode + "." + name + " " + v);
    }

    // every result set of the statement, to the end: "a,b c,d ..."
    private static String drain(Statement st, boolean hasRs)
            throws SQLException {
        List<String> sets = new ArrayList<>();
        while (true) {
            if (hasRs) {
                try (ResultSet rs = st.getResultSet()) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        List<String> row = new ArrayList<>();
                        for (int i = 1; i <= n; i++) {
                            row.add(rs.getString(i));
                        }
                        sets.add(String.join(",", row));
                    }
                }
            } else if (st.getUpdateCount() == -1) {
                break;
            }
            hasRs = st.getMoreResults();
        }
        return String.join(" ", sets);
    }

    public static void main(String[] a) throws Exception {
        String port = a[0];
        String table = a[1];
        int id = Integer.parseInt(a[2]);
        mode = a[3];
        String url = "jdbc:mariadb://127.0.0.1:" + port + "/test"
            + "?user=app&password=secret&connectTimeout=5000"
            + "&socketTimeout=8000&useServerPrepStmts="
            + mode.equals("server");

        try (Connection c = DriverManager.getConnection(url)) {
            step("select", () -> {
                String r = null;
                try (PreparedStatement ps =
                         c.prepareStatement("SELECT @@server_id, ?")) {
                    for (int i = 0; i < 3; i++) {
                        ps.setInt(1, 7 + i);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            r = rs.getString(1) + " " + rs.getString(2);
                        }
                    }
                }
                return r;
            });
            step("insert", () -> {
                try (PreparedStatement ps = c.prepareStatement(
                         "INSERT INTO " + table + " VALUES (?)")) {
                    ps.setInt(1, id);
                    return String.valueOf(ps.executeUpdate());
                }
            });
            step("callable", () -> {
                try (CallableStatement cs = c.prepareCall("{call rws_two()}")) {
                    return drain(cs, cs.execute());
                }
            });
            step("after1", () -> {
                try (Statement st = c.createStatement();
                     ResultSet rs = st.executeQuery("SELECT 5")) {
                    rs.next();
                    return rs.getString(1);
                }
            });
            step("call", () -> {
                try (PreparedStatement ps =
                         c.prepareStatement("CALL rws_two()")) {
                    return drain(ps, ps.execute());
                }
            });
            step("after2", () -> {
                try (PreparedStatement ps =
                         c.prepareStatement("SELECT 6, @@server_id")) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return rs.getString(1) + " " + rs.getString(2);
                    }
                }
            });
        }
    }
}
