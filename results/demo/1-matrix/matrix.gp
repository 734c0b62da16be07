# lockbench matrix: observed outcome per cell (✔ as expected, ✘ not)
set title 'observed outcome of each strategy in each scenario (✔ = as expected)'
set palette maxcolors 5
set palette defined (0 '#44aa77', 1 '#ee7733', 2 '#cc3311', 3 '#882255', 4 '#bbbbbb')
set rmargin 18
set cbrange [-0.5:4.5]
set cbtics ('safe' 0, 'overlap' 1, 'foreign-release' 2, 'deadlock' 3, 'unavailable' 4)
unset key
set xrange [-0.5:5.5]
set yrange [3.5:-0.5]
set xtics rotate by -30 left ("setnx" 0, "setnx-expire" 1, "set-nx-px" 2, "get-del" 3, "token-lua" 4, "redlock" 5)
set ytics ("holder-crash" 0, "holder-pause" 1, "check-then-delete" 2, "server-restart" 3)
set tics scale 0
set terminal pngcairo size 980,312 font 'DejaVu Sans,10'
set output 'matrix.png'
plot 'matrix-grid.dat' using 1:2:3 with image, '' using 1:2:4 with labels font ',8'
set terminal svg size 980,312 dynamic font 'DejaVu Sans,10'
set output 'matrix.svg'
replot
unset output
