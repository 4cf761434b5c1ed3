// The dashboard's charts (the metrics page, a domain's deliverability and DMARC pages): the series in
// each chart element's data-chart attribute, drawn by uPlot (served beside this file), with times shown
// in the zone the page was asked for. Counts go on the left axis (a log scale with `log`), `marks` as
// points on it (today on a curve); `rates`, if any, as percentages on the right.
'use strict';

const COLORS = {
  sent: '#4b5563', delivered: '#15803d', bounced: '#b91c1c', complained: '#c2410c', opened: '#1d4ed8', clicked: '#7e22ce',
  bounce_rate: '#b91c1c', complaint_rate: '#c2410c', daily_volume: '#1d4ed8', today: '#b91c1c',
  passing: '#15803d', failing: '#b91c1c',
};

// The time axis steps by whole periods (uPlot's own choice would label a daily chart at 08:00 and
// 16:00): hours, days, weeks (from the first period's Monday) or months, and their multiples.
const HOUR = 3600;
const DAY = 24 * HOUR;
const STEPS = {
  hourly: [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY],
  daily: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 90 * DAY, 180 * DAY, 365 * DAY],
  weekly: [7 * DAY, 14 * DAY, 28 * DAY, 84 * DAY, 364 * DAY],
  monthly: [30 * DAY, 60 * DAY, 90 * DAY, 180 * DAY, 365 * DAY],
};

const percent = (value) => (value == null ? '' : `${(value * 100).toFixed(2)}%`);

function draw(element) {
  const { timezone, granularity, periods, series, marks = {}, rates = {}, log = false } = JSON.parse(element.dataset.chart);
  const counts = Object.keys(series);
  const points = Object.keys(marks);
  const shares = Object.keys(rates);
  const size = () => ({ width: Math.max(320, element.clientWidth), height: 320 });
  const label = (name) => name.replaceAll('_', ' ');
  const plot = new uPlot(
    {
      ...size(),
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timezone),
      series: [
        {},
        ...counts.map((name) => ({ label: label(name), stroke: COLORS[name], width: 2 })),
        ...points.map((name) => ({ label: label(name), stroke: COLORS[name], fill: COLORS[name], width: 0, points: { show: true, size: 12, fill: COLORS[name] } })),
        ...shares.map((name) => ({ label: label(name), stroke: COLORS[name], width: 2, dash: [6, 4], scale: '%', value: (u, value) => percent(value) })),
      ],
      // A rate axis starts at 0 and shows at least 1%, so that a flat 0 does not fill the chart.
      // `log` draws counts on a log scale, where a geometric curve (a warm-up) is a straight line.
      scales: { ...(log ? { y: { distr: 3 } } : {}), ...(shares.length > 0 ? { '%': { range: (u, min, max) => [0, Math.max(max, 0.01)] } } : {}) },
      axes: [{ incrs: STEPS[granularity] }, { size: 70 }, ...(shares.length > 0 ? [{ scale: '%', side: 1, size: 70, grid: { show: false }, values: (u, ticks) => ticks.map(percent) }] : [])],
      // The instants of the time axis's ticks, for whoever reads the page (its tests).
      hooks: { draw: [(u) => (element.dataset.ticks = JSON.stringify(u.axes[0]._splits ?? []))] },
    },
    [periods, ...counts.map((name) => series[name]), ...points.map((name) => marks[name]), ...shares.map((name) => rates[name])],
    element,
  );
  element.dataset.drawn = 'true';
  window.addEventListener('resize', () => plot.setSize(size()));
}

if (window.uPlot) for (const element of document.querySelectorAll('.chart[data-chart]')) draw(element);
