// The PostgreSQL JDBC driver against rapid-rs's PostgreSQL listener (tests/api/sql_clients.rs runs this
// with `java -cp postgresql.jar JdbcClient.java HOST PORT USER PASSWORD`).
//
// It makes the DatabaseMetaData calls DBeaver and Metabase make on connect and on browsing a table
// (product, catalogs, schemas, tables, columns and their types, keys, indexes),
// then a query with a prepared statement, and prints one JSON object. A failing call prints its SQLSTATE under its name instead of an answer.
import java.sql.*;
import java.util.*;

public class JdbcClient {
    interface Call { Object run() throws SQLException; }

    static final Map<String, Object> out = new TreeMap<>();

    static void record(String name, Call call) {
        try {
            out.put(name, call.run());
        } catch (SQLException e) {
            out.put(name, Map.of("sqlstate", String.valueOf(e.getSQLState()), "message", String.valueOf(e.getMessage())));
        }
    }

    static List<String> column(ResultSet rs, String... names) throws SQLException {
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (String n : names) {
                if (b.length() > 0) b.append('.');
                b.append(rs.getString(n));
            }
            rows.add(b.toString());
        }
        rs.close();
        Collections.sort(rows);
        return rows;
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://" + args[0] + ":" + args[1] + "/default?sslmode=disable";
        try (Connection conn = DriverManager.getConnection(url, args[2], args[3])) {
            DatabaseMetaData md = conn.getMetaData();
            record("product", () -> md.getDatabaseProductName());
            record("version", () -> md.getDatabaseProductVersion());
            record("catalogs", () -> column(md.getCatalogs(), "TABLE_CAT"));
            record("schemas", () -> column(md.getSchemas(), "TABLE_SCHEM"));
            record("table_types", () -> column(md.getTableTypes(), "TABLE_TYPE"));
            record("tables", () -> column(md.getTables(null, null, "%", new String[] {"TABLE", "VIEW"}),
                    "TABLE_SCHEM", "TABLE_NAME"));
            record("columns", () -> column(md.getColumns(null, "travel", "trips", "%"),
                    "COLUMN_NAME", "TYPE_NAME", "IS_NULLABLE"));
            record("primary_keys", () -> column(md.getPrimaryKeys(null, "travel", "trips"), "COLUMN_NAME"));
            // What DBeaver's table view and Metabase's sync call next: keys and indexes.
            record("imported_keys", () -> column(md.getImportedKeys(null, "travel", "trips"), "FKCOLUMN_NAME"));
            record("exported_keys", () -> column(md.getExportedKeys(null, "travel", "trips"), "PKCOLUMN_NAME"));
            record("indexes", () -> column(md.getIndexInfo(null, "travel", "trips", false, true), "INDEX_NAME"));
            record("unique_indexes", () -> column(md.getIndexInfo(null, "travel", "trips", true, true), "INDEX_NAME"));
            // DBeaver's data type list.
            record("type_info", () -> column(md.getTypeInfo(), "TYPE_NAME"));
            record("prepared", () -> {
                try (PreparedStatement ps = conn.prepareStatement(
                        "SELECT region, count(*) AS n FROM travel.trips WHERE region <> ? GROUP BY region ORDER BY region")) {
                    ps.setString(1, "west");
                    List<String> rows = new ArrayList<>();
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) rows.add(rs.getString(1) + "=" + rs.getLong(2));
                    }
                    return rows;
                }
            });
            record("protected", () -> {
                try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM secret.payroll")) {
                    rs.next();
                    return "ok";
                }
            });
            record("write", () -> {
                try (Statement st = conn.createStatement()) {
                    st.execute("DELETE FROM travel.trips");
                    return "ok";
                }
            });
        }
        System.out.println(toJson(out));
    }

    static String toJson(Object o) {
        if (o == null) return "null";
        if (o instanceof Map<?, ?> m) {
            StringJoiner j = new StringJoiner(",", "{", "}");
            for (var e : m.entrySet()) j.add(toJson(e.getKey().toString()) + ":" + toJson(e.getValue()));
            return j.toString();
        }
        if (o instanceof List<?> l) {
            StringJoiner j = new StringJoiner(",", "[", "]");
            for (var e : l) j.add(toJson(e));
            return j.toString();
        }
        String s = o.toString();
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
